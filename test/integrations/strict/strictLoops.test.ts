import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { runBatch, UnboundedCallsError, type AgentLoop, type Pricing } from 'agent-state-machine';
import { fromAnthropic } from '../../../lib/integrations/anthropic';
import { fromOpenAIChat, fromOpenAIResponses } from '../../../lib/integrations/openai';
import { checkMessagesRequest, startAnthropicMessagesServer } from '../../../examples/servers/anthropicMessagesServer';
import { checkChatRequest, startOpenAIChatServer } from '../../../examples/servers/openaiChatServer';
import { checkResponsesRequest, startOpenAIResponsesServer } from '../../../examples/servers/openaiResponsesServer';
import { agentOf, readFile } from '../../helpers/sdkLoopTest';

// The real SDK clients against the strict local servers. Each reply uses every output token
// its request allows (the worst case) and asks for another tool call, so the turn goes on
// until the strict cap refuses a call. The cap is never passed, the max output tokens are
// lowered near it (never below the floor), and every lowered request is one the server accepts.

// $1 per million input tokens, $4 per million output tokens.
const pricing: Pricing = (u) => (u.inputTokens ?? 0) * 1e-6 + (u.outputTokens ?? 0) * 4e-6;
const CAP = 0.04;
const MAX = 4000;
const FLOOR = 256;
// What the server bills for input: about one token per 4 characters of the body, as tokenizers do.
const billedInput = (body: unknown): number => Math.ceil(JSON.stringify(body).length / 4);

interface Served {
  loop: AgentLoop;
  maxes: () => number[];
  rejected: () => unknown[];
  close: () => Promise<void>;
}

const loops: Record<string, () => Promise<Served>> = {
  'OpenAI Chat': async () => {
    const s = await startOpenAIChatServer({
      maxOutputTokens: MAX,
      respond: (body) => ({
        toolCalls: [{ name: 'read_file', arguments: '{"path":"a.txt"}' }],
        usage: { prompt_tokens: billedInput(body), completion_tokens: body.max_completion_tokens },
      }),
    });
    const client = new OpenAI({ apiKey: 'sk-local', baseURL: s.baseURL });
    return {
      loop: fromOpenAIChat(client, { model: 'gpt-4o-mini', tools: { read_file: readFile }, maxTokens: MAX }),
      maxes: () => s.exchanges.map((e) => e.body.max_completion_tokens as number),
      rejected: () => s.rejected,
      close: () => s.close(),
    };
  },
  'OpenAI Responses': async () => {
    const s = await startOpenAIResponsesServer({
      maxOutputTokens: MAX,
      respond: (body: { max_output_tokens: number }) => ({
        toolCalls: [{ name: 'read_file', arguments: '{"path":"a.txt"}' }],
        usage: { input_tokens: billedInput(body), output_tokens: body.max_output_tokens },
      }),
    });
    const client = new OpenAI({ apiKey: 'sk-local', baseURL: s.baseURL });
    return {
      loop: fromOpenAIResponses(client, { model: 'gpt-4.1-mini', tools: { read_file: readFile }, maxTokens: MAX }),
      maxes: () => s.exchanges.map((e) => (e.body as { max_output_tokens: number }).max_output_tokens),
      rejected: () => s.rejected,
      close: () => s.close(),
    };
  },
  Anthropic: async () => {
    const s = await startAnthropicMessagesServer({
      maxOutputTokens: MAX,
      respond: (body) => ({
        toolUses: [{ name: 'read_file', input: { path: 'a.txt' } }],
        usage: { input_tokens: billedInput(body), output_tokens: body.max_tokens },
      }),
    });
    const client = new Anthropic({ apiKey: 'sk-ant-local', baseURL: s.baseURL });
    return {
      loop: fromAnthropic(client, { model: 'claude-x', tools: { read_file: readFile }, maxTokens: MAX }),
      maxes: () => s.exchanges.map((e) => e.body.max_tokens as number),
      rejected: () => s.rejected,
      close: () => s.close(),
    };
  },
};

describe.each(Object.keys(loops))('%s under a strict maxCostUsd', (name) => {
  let served: Served | undefined;
  afterEach(async () => served?.close());

  it('never passes the cap: lowers max output tokens near it (not below the floor), then refuses the call that does not fit', async () => {
    served = await loops[name]!();
    const agent = agentOf(served.loop, { pricing, budget: { maxCostUsd: CAP, strict: true }, minOutputTokens: FLOOR });
    const result = await agent.runTurn('Read a.txt again and again');
    expect(result.outcome).toBe('budget_exceeded');
    expect(served.rejected()).toEqual([]);
    expect(result.usage.costUsd).toBeLessThanOrEqual(CAP);
    const maxes = served.maxes();
    expect(maxes.length).toBeGreaterThan(2);
    expect(maxes[0]).toBe(MAX);
    // Lowered near the cap, never below the floor.
    expect(Math.min(...maxes)).toBeLessThan(MAX);
    expect(Math.min(...maxes)).toBeGreaterThanOrEqual(FLOOR);
    // The bound never fell below what the server billed: each call cost at most its hold,
    // so what is left is less than the floor's worst case.
    expect(CAP - result.usage.costUsd).toBeLessThan(0.01);
  });

  it('without a max output tokens setting, a dollar cap (strict by default) refuses the loop before any request, naming the option', async () => {
    // The Anthropic loop always sends max_tokens (default 4096): it always has a bound.
    if (name === 'Anthropic') return;
    served = await loops[name]!();
    const client = new OpenAI({ apiKey: 'k', baseURL: 'http://127.0.0.1:9/v1' });
    const bare =
      name === 'OpenAI Chat' ? fromOpenAIChat(client, { model: 'm' }) : fromOpenAIResponses(client, { model: 'm' });
    for (const budget of [{ maxCostUsd: CAP }, { maxCostUsd: CAP, strict: true }])
      expect(() => agentOf(bare, { pricing, budget })).toThrow(
        new RegExp(
          `^budget\\.maxCostUsd is a strict cap .*but ${name === 'OpenAI Chat' ? 'fromOpenAIChat' : 'fromOpenAIResponses'} sets no max output tokens, so a call's output \\(and its cost\\) has no bound: give \`maxTokens\` on the loop, or set \`strict: false\` beside \`maxCostUsd\``,
        ),
      );
    // runBatch refuses it before any run starts; a factory's loop ends its run in Error with the same words.
    const tasks = [{ id: 'a', input: 'hi', agent: bare }];
    await expect(runBatch(tasks, { logger: false, pricing, perRun: { maxCostUsd: CAP } })).rejects.toThrow(
      /^perRun\.maxCostUsd is a strict cap .*sets no max output tokens.*`strict: false`/,
    );
    await expect(runBatch(tasks, { logger: false, pricing, total: { maxCostUsd: CAP } })).rejects.toThrow(
      UnboundedCallsError,
    );
    const report = await runBatch([{ id: 'a', input: 'hi', agent: () => bare }], {
      logger: false,
      pricing,
      perRun: { maxCostUsd: CAP },
    });
    expect(report.runs[0]!.outcome).toBe('error');
    expect(report.runs[0]!.error!.message).toMatch(
      /^budget\.maxCostUsd is a strict cap .*sets no max output tokens.*`strict: false`/,
    );
  });
});

describe('the strict servers check max output tokens as the APIs do', () => {
  it('reject an over-large or non-positive max, and a missing one where the API requires it', () => {
    const chat = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] };
    expect(checkChatRequest({ ...chat, max_completion_tokens: 5000 }, 4000)).toBe(
      'max_tokens is too large: 5000. This model supports at most 4000 completion tokens, whereas you provided 5000.',
    );
    expect(checkChatRequest({ ...chat, max_tokens: 0 })).toBe(
      "Invalid 'max_tokens': integer below minimum value. Expected a value >= 1, but got 0 instead.",
    );
    expect(checkChatRequest({ ...chat, max_completion_tokens: 4000 }, 4000)).toBeUndefined();
    const messages = { model: 'claude-x', messages: [{ role: 'user', content: 'hi' }] };
    expect(checkMessagesRequest(messages)).toBe('max_tokens: Field required');
    expect(checkMessagesRequest({ ...messages, max_tokens: 70_000 })).toBe(
      'max_tokens: 70000 > 64000, which is the maximum allowed number of output tokens for claude-x',
    );
    expect(checkResponsesRequest({ model: 'gpt-4.1-mini', input: 'hi', max_output_tokens: 200_000 })).toBe(
      'max_output_tokens is too large: 200000. This model supports at most 128000 output tokens, whereas you provided 200000.',
    );
  });
});
