import OpenAI from 'openai';
import { meterFetch, observeLoop } from 'agent-state-machine';
import { fromOpenAIResponses } from '../../../lib/integrations/openai';
import { responsesWire } from '../../../lib/integrations/openai/responsesWire';
import { createPricing } from '../../../lib/integrations/pricing';
import { fixture, recordedFetch } from '../../fixtures/recordedFetch';
import { agentOf } from '../../helpers/sdkLoopTest';

// Responses the OpenAI Responses API sent, recorded by the AI SDK for its own tests
// (test/fixtures/openai/NOTICE.md), read by the real `openai` client through a fake `fetch` and
// run through the ready-made loop under a strict cap. Usage and cost must be the recording's,
// and each charge within the hold the library took before the request was sent.

// gpt-5-mini's list prices and a cent a search, as the user's table would give them.
const pricing = createPricing({
  prices: {
    'gpt-5-mini': { inputPerMTok: 0.25, cachedInputPerMTok: 0.025, outputPerMTok: 2, webSearchPerUse: 0.01 },
  },
  catalog: false,
});

function journaled(): { lines: Array<Record<string, unknown>>; sink: { write(): void; journal(j: unknown): void } } {
  const lines: Array<Record<string, unknown>> = [];
  return { lines, sink: { write: () => undefined, journal: (j) => void lines.push(j as Record<string, unknown>) } };
}

describe('fromOpenAIResponses on responses recorded from the API', () => {
  it.each([
    // Not streamed: three searches; 19,681 in (3,712 from the cache), 3,773 out (3,136 reasoning).
    {
      file: 'ai-sdk/openai-web-search-tool.1.json',
      stream: false,
      usage: { inputTokens: 19_681, cachedInputTokens: 3712, outputTokens: 3773, reasoningTokens: 3136 },
      searches: 3,
      // (15,969 × $0.25 + 3,712 × $0.025 + 3,773 × $2) per million, and 3 searches at $0.01.
      costUsd: 0.01163105 + 0.03,
    },
    // Streamed: six searches; 31,073 in (3,712 from the cache), 4,416 out (3,712 reasoning).
    {
      file: 'ai-sdk/openai-web-search-tool.1.chunks.txt',
      stream: true,
      usage: { inputTokens: 31_073, cachedInputTokens: 3712, outputTokens: 4416, reasoningTokens: 3712 },
      searches: 6,
      costUsd: 0.01576505 + 0.06,
    },
  ])('web search ($file): the recorded usage, searches and cost, charged within its hold', async (c) => {
    const recorded = recordedFetch('openai', [c.file]);
    const client = new OpenAI({ apiKey: 'sk-local', fetch: recorded.fetch });
    const loop = fromOpenAIResponses(client, {
      model: 'gpt-5-mini',
      maxTokens: 8000,
      stream: c.stream,
      // What one search's results may add to the input, as the user states it (OpenAI states no bound).
      serverToolResultTokens: 8000,
      request: { tools: [{ type: 'web_search' }], max_tool_calls: c.searches },
    });
    const out = journaled();
    const agent = agentOf(loop, { pricing, budget: { maxCostUsd: 5 }, sink: out.sink, ledger: true });
    const result = await agent.runTurn('What happened in Berlin today?');

    expect(result.outcome).toBe('end_of_turn');
    expect(result.text).toMatch(/vercel/);
    const { inputTokens, outputTokens } = c.usage;
    expect(result.usage).toMatchObject({ inputTokens, outputTokens, llmCalls: 1 });
    expect(result.usage.costUsd).toBeCloseTo(c.costUsd, 10);
    expect(result.usage.uncertainUsd).toBe(0);
    // The request as sent held its worst case first; the answer was charged within it.
    const reserve = out.lines.find((l) => l.type === 'reserve')!;
    const answer = out.lines.find((l) => l.type === 'llm')!;
    expect(answer.usage).toEqual({ ...c.usage, serverToolUses: { webSearch: c.searches } });
    expect(answer.costUsd).toBeCloseTo(c.costUsd, 10);
    expect(answer.boundExceeded).toBeUndefined();
    expect(answer.costUsd as number).toBeLessThanOrEqual(reserve.maxCostUsd as number);
    expect(recorded.requests[0]).toMatchObject({ max_output_tokens: 8000, max_tool_calls: c.searches });
  });

  it.each([
    ['ai-sdk/openai-shell-tool.1.json', 157, 73],
    ['ai-sdk/openai-shell-tool.1.chunks.txt', 145, 41],
  ])(
    'a recorded shell_call (%s) ends the turn in an error naming it, billed at its usage (its 400 is not an unbilled one)',
    async (file, inputTokens, outputTokens) => {
      const recorded = recordedFetch('openai', [file]);
      const client = new OpenAI({ apiKey: 'sk-local', fetch: recorded.fetch });
      const loop = fromOpenAIResponses(client, { model: 'gpt-5.1', maxTokens: 1000, stream: file.endsWith('.txt') });
      const result = await agentOf(loop, { pricing: () => 0.001 }).runTurn('List the files');
      expect(result.outcome).toBe('error');
      expect(result.error?.message).toMatch(/shell_call/);
      // Answered and billed: before, the refusal's 400 released it as never billed, at $0.
      expect(result.usage).toMatchObject({
        llmCalls: 1,
        inputTokens,
        outputTokens,
        costUsd: 0.001,
        uncertainUsd: 0,
        releasedUsd: 0,
      });
    },
  );
});

describe('fromOpenAIResponses: a refused answer that reports no usage (some gateways)', () => {
  it('is charged at its hold as uncertain, never released as an unbilled 400', async () => {
    const recorded = JSON.parse(fixture('openai', 'ai-sdk/openai-shell-tool.1.json')) as Record<string, unknown>;
    const body = JSON.stringify({ ...recorded, usage: null });
    const fetch = (async () =>
      new Response(body, { headers: { 'content-type': 'application/json' } })) as typeof globalThis.fetch;
    const loop = fromOpenAIResponses(new OpenAI({ apiKey: 'sk-local', fetch }), { model: 'gpt-5.1', maxTokens: 1000 });
    const result = await agentOf(loop, {
      pricing: (u) => ((u.inputTokens ?? 0) + (u.outputTokens ?? 0)) * 1e-6,
      budget: { maxCostUsd: 1 },
      onUnknownCost: 'warn',
    }).runTurn('List the files');
    expect(result.error?.message).toMatch(/shell_call/);
    expect(result.usage.releasedUsd).toBe(0);
    expect(result.usage.uncertainUsd).toBeGreaterThan(0);
    expect(result.usage.costUsd).toBe(result.usage.uncertainUsd);
  });
});

describe('fromOpenAIResponses: a failed response that reports usage', () => {
  /** The recorded answer marked failed with `error`, reporting `usage`, run once under a cap with no retry. */
  async function runFailed(error: { code: string; message: string }, usage: Record<string, number>) {
    const recorded = JSON.parse(fixture('openai', 'ai-sdk/openai-shell-tool.1.json')) as Record<string, unknown>;
    const body = JSON.stringify({ ...recorded, status: 'failed', error, output: [], usage });
    const fetch = (async () =>
      new Response(body, { headers: { 'content-type': 'application/json' } })) as typeof globalThis.fetch;
    const loop = fromOpenAIResponses(new OpenAI({ apiKey: 'sk-local', fetch }), { model: 'gpt-5.1', maxTokens: 1000 });
    return agentOf(loop, {
      pricing: (u) => ((u.inputTokens ?? 0) + (u.outputTokens ?? 0)) * 1e-6,
      budget: { maxCostUsd: 1 },
      retry: { retries: 0 },
    }).runTurn('List the files');
  }

  it('is billed at that usage (what the provider billed), not held at its worst case as a 500', async () => {
    const result = await runFailed(
      { code: 'server_error', message: 'The model failed mid-answer.' },
      { input_tokens: 200, output_tokens: 40, total_tokens: 240 },
    );
    expect(result.outcome).toBe('error');
    expect(result.error?.message).toMatch(/server_error/);
    expect(result.usage).toMatchObject({
      llmCalls: 1,
      inputTokens: 200,
      outputTokens: 40,
      uncertainUsd: 0,
      releasedUsd: 0,
    });
    expect(result.usage.costUsd).toBeCloseTo(240e-6, 12);
  });

  /** The same failed answer streamed: `response.created`, then `response.failed` carrying it. */
  function failedStream(error: { code: string; message: string }, usage: Record<string, number>): typeof fetch {
    const recorded = JSON.parse(fixture('openai', 'ai-sdk/openai-shell-tool.1.json')) as Record<string, unknown>;
    const failed = { ...recorded, status: 'failed', error, output: [], usage };
    const events = [
      {
        type: 'response.created',
        sequence_number: 0,
        response: { ...recorded, status: 'in_progress', output: [], usage: null },
      },
      { type: 'response.failed', sequence_number: 1, response: failed },
    ];
    const body = events.map((e) => `event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`).join('');
    return (async () =>
      new Response(body, { headers: { 'content-type': 'text/event-stream' } })) as typeof globalThis.fetch;
  }

  it('streamed (response.failed with usage): billed at that usage on the ready-made loop and on your own loop on the metered fetch', async () => {
    const usage = { input_tokens: 200, output_tokens: 40, total_tokens: 240 };
    const error = { code: 'server_error', message: 'The model failed mid-answer.' };
    const pricingPerToken = (u: { inputTokens?: number; outputTokens?: number }) =>
      ((u.inputTokens ?? 0) + (u.outputTokens ?? 0)) * 1e-6;
    const billed = { llmCalls: 1, inputTokens: 200, outputTokens: 40, uncertainUsd: 0, releasedUsd: 0 };

    const loop = fromOpenAIResponses(new OpenAI({ apiKey: 'sk-local', fetch: failedStream(error, usage) }), {
      model: 'gpt-5.1',
      maxTokens: 1000,
      stream: true,
    });
    const ready = await agentOf(loop, {
      pricing: pricingPerToken,
      budget: { maxCostUsd: 1 },
      retry: { retries: 0 },
    }).runTurn('List the files');
    expect(ready.error?.message).toMatch(/server_error/);
    expect(ready.usage).toMatchObject(billed);
    expect(ready.usage.costUsd).toBeCloseTo(240e-6, 12);

    const client = new OpenAI({
      apiKey: 'sk-local',
      maxRetries: 0,
      fetch: meterFetch([responsesWire], failedStream(error, usage)),
    });
    const { result } = await observeLoop(
      { pricing: pricingPerToken, budget: { maxCostUsd: 1, strict: true }, logger: false },
      'List the files',
      async () => {
        const events = await client.responses.create({
          model: 'gpt-5.1',
          input: 'List the files',
          max_output_tokens: 1000,
          stream: true,
        });
        for await (const event of events) void event;
        return 'unreachable';
      },
    );
    expect(result.outcome).toBe('error');
    expect(result.usage).toMatchObject(billed);
    expect(result.usage.costUsd).toBeCloseTo(240e-6, 12);
  });

  it('a usage of no input is a placeholder, not a bill: a rate-limited failed response is released, as its 429 would be', async () => {
    const result = await runFailed(
      { code: 'rate_limit_exceeded', message: 'Rate limit reached.' },
      { input_tokens: 0, output_tokens: 0, total_tokens: 0 },
    );
    expect(result.error?.message).toMatch(/rate_limit_exceeded/);
    expect(result.usage).toMatchObject({ llmCalls: 1, costUsd: 0, uncertainUsd: 0 });
    expect(result.usage.releasedUsd).toBeGreaterThan(0);
  });
});
