// The Agents SDK's own OpenAI provider against the strict local servers (Responses and Chat
// Completions), through the mirror: the requests it makes are ones the real API takes, and a
// budget stop leaves nothing the next request would be rejected for.
import { Agent, OpenAIProvider, RunState, setTracingDisabled, tool } from '@openai/agents';
import { z } from 'zod';
import { BudgetExceededError } from 'agent-state-machine';
import { validateHistory } from 'agent-state-machine/history';
import { agentsMirror, runStateOf } from '../../../lib/integrations/openai-agents';
import {
  startOpenAIResponsesServer,
  type OpenAIResponsesServer,
} from '../../../examples/servers/openaiResponsesServer';
import { startOpenAIChatServer, type OpenAIChatServer } from '../../../examples/servers/openaiChatServer';

setTracingDisabled(true);

const echo = tool({
  name: 'echo',
  description: 'Echoes its text',
  parameters: z.object({ text: z.string() }),
  execute: async ({ text }) => `echo: ${text}`,
});

// Prices per token: $1 per million input, $4 per million output.
const pricing = (u: { inputTokens?: number; outputTokens?: number }): number =>
  ((u.inputTokens ?? 0) * 1 + (u.outputTokens ?? 0) * 4) / 1e6;

/** One tool call, then, once its result is in, the answer. */
function responsesReply(body: { input: { type?: string }[] }) {
  return body.input.some((i) => i.type === 'function_call_output')
    ? { text: 'done', usage: { input_tokens: 300, output_tokens: 20 } }
    : {
        toolCalls: [{ callId: 'call_1', name: 'echo', arguments: '{"text":"hi"}' }],
        usage: { input_tokens: 200, output_tokens: 10 },
      };
}

describe('AgentsMirror against the strict local OpenAI servers', () => {
  let responses: OpenAIResponsesServer;
  let chat: OpenAIChatServer;

  beforeAll(async () => {
    responses = await startOpenAIResponsesServer({ respond: responsesReply });
    chat = await startOpenAIChatServer({
      respond: (body: { messages: { role: string }[] }) =>
        body.messages.at(-1)?.role === 'tool'
          ? { content: 'done', usage: { prompt_tokens: 300, completion_tokens: 20 } }
          : {
              toolCalls: [{ id: 'call_1', name: 'echo', arguments: '{"text":"hi"}' }],
              usage: { prompt_tokens: 200, completion_tokens: 10 },
            },
    });
  });

  afterAll(async () => {
    await responses?.close();
    await chat?.close();
  });

  // Streamed, each response is watched against the agent's maxTokens, and none is cut below it.
  it.each([
    { api: 'Responses', useResponses: true, stream: false },
    { api: 'Chat Completions', useResponses: false, stream: false },
    { api: 'Responses', useResponses: true, stream: true },
    { api: 'Chat Completions', useResponses: false, stream: true },
  ])(
    'runs a tool round trip through the $api API (streamed: $stream) with every request accepted, priced',
    async ({ useResponses, stream }) => {
      const server = useResponses ? responses : chat;
      const before = server.exchanges.length;
      const provider = new OpenAIProvider({ apiKey: 'test-key', baseURL: server.baseURL, useResponses });
      const sm = agentsMirror({
        modelProvider: provider,
        pricing,
        budget: { maxCostUsd: 1, strict: false },
        logger: false,
      });
      const agent = new Agent({
        name: 'helper',
        model: 'gpt-4o-mini',
        tools: [echo],
        modelSettings: { maxTokens: 20 },
      });
      let finalOutput: unknown;
      if (stream) {
        const streamed = await sm.run(agent, 'say hi', { stream: true });
        await streamed.completed;
        finalOutput = streamed.finalOutput;
        // The mirror hears the end on the stream's completion, a microtask later.
        await new Promise((resolve) => setImmediate(resolve));
      } else finalOutput = (await sm.run(agent, 'say hi')).finalOutput;
      expect(finalOutput).toBe('done');
      expect(server.exchanges.slice(before).map((e) => e.stream)).toEqual([stream, stream]);
      expect(server.exchanges.length - before).toBe(2);
      expect(server.rejected).toEqual([]);
      expect(sm.result).toMatchObject({ outcome: 'end_of_turn', text: 'done' });
      expect(sm.usage).toMatchObject({ llmCalls: 2, toolCalls: 1, inputTokens: 500, outputTokens: 30 });
      expect(sm.usage.costUsd).toBeCloseTo((500 + 30 * 4) / 1e6, 12);
      expect(validateHistory(sm.machine.history()).issues).toEqual([]);
      expect(sm.machine.history()[2]?.data).toMatchObject({ model: 'gpt-4o-mini' });
    },
  );

  it('stops before the second request once the dollar cap is spent, and the resumed state is accepted by the server', async () => {
    const before = responses.exchanges.length;
    const provider = new OpenAIProvider({ apiKey: 'test-key', baseURL: responses.baseURL, useResponses: true });
    // The first response costs $0.00024: a cap of $0.0002 is spent by it.
    const sm = agentsMirror({
      modelProvider: provider,
      pricing,
      budget: { maxCostUsd: 0.0002, strict: false },
      logger: false,
    });
    const agent = new Agent({ name: 'helper', model: 'gpt-4o-mini', tools: [echo] });
    const error = await sm.run(agent, 'say hi').then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(BudgetExceededError);
    expect(responses.exchanges.length - before).toBe(1);
    expect(sm.result).toMatchObject({ outcome: 'budget_exceeded' });
    const state = await RunState.fromString(agent, runStateOf(error)!.toString());
    const again = agentsMirror({ modelProvider: provider, pricing, logger: false });
    const result = await again.run(agent, state);
    expect(result.finalOutput).toBe('done');
    expect(responses.exchanges.length - before).toBe(2);
    expect(responses.rejected).toEqual([]);
  });
});
