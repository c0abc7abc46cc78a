// A LangGraph ReAct agent on LangChain's ChatOpenAI, pointed at the strict local Chat
// Completions server, mirrored by LangGraphMirror: every request is one the real API takes, the
// tokens and the model come from the wire, and a dollar cap stops the graph before its next call.
// Each holds whether the mirror rides the graph's callbacks (observe 'graph') or hears only the
// model and tools it wrapped (observe 'wrapped'): ChatOpenAI.bindTools makes another ChatOpenAI
// (its withConfig does), which the wrapper wraps in turn, so the mirror's handler stays its own callback.
import { tool } from '@langchain/core/tools';
import { createReactAgent } from '@langchain/langgraph/prebuilt';
import { ChatOpenAI } from '@langchain/openai';
import { z } from 'zod';
import { BudgetExceededError } from 'agent-state-machine';
import { validateHistory } from 'agent-state-machine/history';
import { langGraphMirror, type LangGraphMirror, type LangGraphObserve } from '../../../lib/integrations/langgraph';
import { startOpenAIChatServer, type OpenAIChatServer } from '../../../examples/servers/openaiChatServer';

const echo = tool(async ({ text }: { text: string }) => `echo: ${text}`, {
  name: 'echo',
  description: 'Echoes its text',
  schema: z.object({ text: z.string() }),
});

// $1 per million input tokens, $4 per million output.
const pricing = (u: { inputTokens?: number; outputTokens?: number }): number =>
  ((u.inputTokens ?? 0) * 1 + (u.outputTokens ?? 0) * 4) / 1e6;

let server: OpenAIChatServer;
beforeAll(async () => {
  server = await startOpenAIChatServer({
    respond: (body: { messages: { role: string }[] }) =>
      body.messages.at(-1)?.role === 'tool'
        ? { content: 'done', usage: { prompt_tokens: 300, completion_tokens: 20 } }
        : {
            toolCalls: [{ id: 'call_1', name: 'echo', arguments: '{"text":"hi"}' }],
            usage: { prompt_tokens: 200, completion_tokens: 10 },
          },
  });
});
afterAll(async () => server?.close());
beforeEach(() => jest.spyOn(console, 'error').mockImplementation(() => undefined));
afterEach(() => jest.restoreAllMocks());

const llm = (streaming = false) =>
  new ChatOpenAI({
    model: 'gpt-4o-mini',
    apiKey: 'test-key',
    configuration: { baseURL: server.baseURL },
    maxRetries: 0,
    streaming,
  });

/** The ReAct agent on `model`: as it is observing the graph, built on the mirror's wrappers observing 'wrapped'. */
const agentOf = (lg: LangGraphMirror, model: ChatOpenAI) =>
  lg.observe === 'wrapped'
    ? createReactAgent({ llm: lg.wrapModel(model), tools: lg.wrapTools([echo]) })
    : createReactAgent({ llm: model, tools: [echo] });

/** Observing 'wrapped', the graph runs with none of the mirror's callbacks: the handler never hears a chain. */
const chainsHeard = (lg: LangGraphMirror): jest.SpyInstance => jest.spyOn(lg, 'handleChainStart');

describe.each<LangGraphObserve>(['graph', 'wrapped'])(
  "LangGraphMirror (observe '%s') on ChatOpenAI against the strict local Chat Completions server",
  (observe) => {
    // Streaming: LangChain takes its streaming path (the mirror prefers it for a model that streams),
    // with the usage the stream reports; its other path estimates the tokens with a tokenizer it
    // downloads, minutes without a network, past the test's timeout.
    it.each([
      ['', false],
      [' (streaming)', true],
    ])(
      'mirrors a tool round trip%s with every request accepted, priced from the tokens on the wire',
      async (_, streaming) => {
        const before = server.exchanges.length;
        const lg = langGraphMirror({ pricing, budget: { maxCostUsd: 1, strict: false }, logger: false, observe });
        const chains = chainsHeard(lg);
        const out = await lg.run(agentOf(lg, llm(streaming)), {
          messages: [{ role: 'user', content: 'say hi' }],
        });
        expect(out.messages.at(-1)?.content).toBe('done');
        expect(server.exchanges.length - before).toBe(2);
        expect(server.exchanges.slice(before).map((e) => e.stream)).toEqual([streaming, streaming]);
        expect(server.rejected).toEqual([]);
        expect(lg.result).toMatchObject({ outcome: 'end_of_turn', text: 'done' });
        expect(lg.usage).toMatchObject({ llmCalls: 2, toolCalls: 1, inputTokens: 500, outputTokens: 30 });
        expect(lg.usage.costUsd).toBeCloseTo((500 + 30 * 4) / 1e6, 12);
        expect(lg.machine.history()[2]?.data).toMatchObject({ model: expect.stringMatching(/^gpt-4o-mini/) });
        expect(validateHistory(lg.machine.history()).issues).toEqual([]);
        if (observe === 'wrapped') expect(chains).not.toHaveBeenCalled();
        else expect(chains).toHaveBeenCalled();
      },
    );

    it('stops before the second request once the dollar cap is spent', async () => {
      const before = server.exchanges.length;
      const lg = langGraphMirror({ pricing, budget: { maxCostUsd: 0.0002, strict: false }, logger: false, observe });
      const error = await lg.run(agentOf(lg, llm()), { messages: [{ role: 'user', content: 'say hi' }] }).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(BudgetExceededError);
      expect(server.exchanges.length - before).toBe(1);
      expect(lg.result).toMatchObject({ outcome: 'budget_exceeded' });
      expect(validateHistory(lg.machine.history()).issues).toEqual([]);
    });
  },
);
