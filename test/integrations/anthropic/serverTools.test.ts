import Anthropic from '@anthropic-ai/sdk';
import type { LLMCallBound } from '../../../lib/agent/AgentLoop';
import { worstCaseCost } from '../../../lib/agent/money/worstCaseCost';
import { fromAnthropic, type AnthropicOptions } from '../../../lib/integrations/anthropic';
import { createPricing } from '../../../lib/integrations/pricing';
import { mapResponsesUsage } from '../../../lib/integrations/openai';
import { recordedFetch } from '../../fixtures/recordedFetch';
import { agentOf } from '../../helpers/sdkLoopTest';

// Server tools (web search, web fetch, code execution) are billed per use, and their results
// grow the request's input: the loop reports their uses, pricing charges their fees, and a
// request that offers one is held at a worst case that covers them — or, when nothing bounds
// them, a strict cap refuses the loop by name, saying what to set.

const ctx = () => ({ signal: new AbortController().signal, turn: 1, attempt: 1 });
// $3 / $15 per million tokens, a cent a search: Anthropic's Sonnet prices and search fee.
const prices = { inputPerMTok: 3, outputPerMTok: 15, webSearchPerUse: 0.01 };

function loopOn(files: string[], extra: Partial<AnthropicOptions> = {}) {
  const recorded = recordedFetch('anthropic', files);
  const client = new Anthropic({ apiKey: 'sk-ant-local', fetch: recorded.fetch });
  return fromAnthropic(client, { model: 'claude-fable-5', ...extra });
}

describe('fromAnthropic with server tools', () => {
  it('reports the recorded web search as a use, and the run is charged its fee beside the tokens', async () => {
    const loop = loopOn(['web_search_refusal.sse'], { stream: true });
    const agent = agentOf(loop, { pricing: createPricing({ prices: { 'claude-fable-5': prices } }) });
    const result = await agent.runTurn('Any eclipse news?');
    // The recording's usage counts no search; its server_tool_use block is one.
    expect(loop.messages[1]!.content).toContainEqual(expect.objectContaining({ type: 'server_tool_use' }));
    expect(result.usage.costUsd).toBeCloseTo(28 * 3e-6 + 106 * 15e-6 + 0.01, 12);
  });

  it('holds a request that offers web search with max_uses at a worst case that covers its fees and results', () => {
    const options: AnthropicOptions = {
      model: 'claude-sonnet-4-5',
      maxTokens: 1000,
      serverToolResultTokens: 5000,
      request: { tools: [{ type: 'web_search_20250305', name: 'web_search', max_uses: 3 }] },
    };
    const plain = fromAnthropic(new Anthropic({ apiKey: 'k' }), { model: 'claude-sonnet-4-5', maxTokens: 1000 });
    const base = (
      plain.llmCallBound!({ operation: 'sendUserMessage', message: 'hi' }, ctx()) as { inputTokens: number }
    ).inputTokens;
    const loop = fromAnthropic(new Anthropic({ apiKey: 'k' }), options);
    const bound = loop.llmCallBound!({ operation: 'sendUserMessage', message: 'hi' }, ctx()) as LLMCallBound;
    expect(bound.serverToolUses).toEqual({ webSearch: 3 });
    // The tool's definition is in the request as sent; four passes, and results of 1 + 2 + 3 uses.
    expect(bound.inputTokens).toBeGreaterThan(4 * (base + 1000) + 5000 * 6 - 4 * 100);
    const pricing = createPricing();
    const worst = worstCaseCost(bound, pricing).costUsd!;
    const tokensOnly = worstCaseCost({ ...bound, serverToolUses: undefined }, pricing).costUsd!;
    // Three searches at the price data's $10 per thousand.
    expect(worst - tokensOnly).toBeCloseTo(0.03, 10);
  });

  it('under a strict cap, refuses a loop whose server tools have no bound, by name and with what to set', () => {
    const pricing = createPricing();
    const noMax = fromAnthropic(new Anthropic({ apiKey: 'k' }), {
      model: 'claude-sonnet-4-5',
      request: { tools: [{ type: 'web_search_20250305', name: 'web_search' }] },
    });
    expect(() => agentOf(noMax, { pricing, budget: { maxCostUsd: 1 } })).toThrow(
      /the web_search_20250305 tool in request\.tools has no max_uses.*give `max_uses` on the web_search_20250305 tool/,
    );
    const noResults = fromAnthropic(new Anthropic({ apiKey: 'k' }), {
      model: 'claude-sonnet-4-5',
      request: { tools: [{ type: 'web_search_20250305', name: 'web_search', max_uses: 2 }] },
    });
    expect(() => agentOf(noResults, { pricing, budget: { maxCostUsd: 1 } })).toThrow(/serverToolResultTokens/);
    const code = fromAnthropic(new Anthropic({ apiKey: 'k' }), {
      model: 'claude-sonnet-4-5',
      request: { tools: [{ type: 'code_execution_20250825', name: 'code_execution' }] },
    });
    expect(() => agentOf(code, { pricing, budget: { maxCostUsd: 1 } })).toThrow(
      /code_execution_20250825 tool in request\.tools is billed by container time/,
    );
    // Off strict it runs; its bound is unknown, and says why.
    expect(() => agentOf(noMax, { pricing, budget: { maxCostUsd: 1, strict: false } })).not.toThrow();
    expect(() => noMax.llmCallBound!({ operation: 'sendUserMessage', message: 'hi' }, ctx())).toThrow(/max_uses/);
  });
});

describe('mapResponsesUsage with web searches', () => {
  it("counts the response's web_search_call items as searches, billed per use", () => {
    const usage = {
      input_tokens: 10,
      output_tokens: 5,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: 15,
    } as Parameters<typeof mapResponsesUsage>[0];
    const output = [{ type: 'web_search_call' }, { type: 'web_search_call' }, { type: 'message' }];
    expect(mapResponsesUsage(usage, output)?.serverToolUses).toEqual({ webSearch: 2 });
    expect(mapResponsesUsage(usage, [{ type: 'message' }])?.serverToolUses).toBeUndefined();
  });
});

describe('fromAnthropic with web fetch', () => {
  const fetchTool = { type: 'web_fetch_20250910', name: 'web_fetch', max_uses: 2, max_content_tokens: 4000 };

  /** An answer that fetched two pages, as the Messages API returns one: its usage counts the fetches. */
  const fetched = {
    id: 'msg_fetch',
    type: 'message',
    role: 'assistant',
    model: 'claude-sonnet-4-5',
    content: [
      { type: 'server_tool_use', id: 'srvtoolu_1', name: 'web_fetch', input: { url: 'https://example.com/a' } },
      {
        type: 'web_fetch_tool_result',
        tool_use_id: 'srvtoolu_1',
        content: {
          type: 'web_fetch_result',
          url: 'https://example.com/a',
          content: { type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'Page A' } },
          retrieved_at: '2026-12-04T10:00:00Z',
        },
      },
      { type: 'server_tool_use', id: 'srvtoolu_2', name: 'web_fetch', input: { url: 'https://example.com/b' } },
      {
        type: 'web_fetch_tool_result',
        tool_use_id: 'srvtoolu_2',
        content: {
          type: 'web_fetch_result',
          url: 'https://example.com/b',
          content: { type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'Page B' } },
          retrieved_at: '2026-12-04T10:00:01Z',
        },
      },
      { type: 'text', text: 'Both pages say hello.' },
    ],
    stop_reason: 'end_turn',
    stop_sequence: null,
    usage: { input_tokens: 6000, output_tokens: 200, server_tool_use: { web_fetch_requests: 2 } },
  };

  function fetchingLoop() {
    const fetch = (async () =>
      new Response(JSON.stringify(fetched), {
        headers: { 'content-type': 'application/json' },
      })) as typeof globalThis.fetch;
    return fromAnthropic(new Anthropic({ apiKey: 'sk-ant-local', fetch }), {
      model: 'claude-sonnet-4-5',
      maxTokens: 1000,
      request: { tools: [fetchTool] },
    });
  }

  it('holds a request that offers web fetch at a worst case covering its results (twice max_content_tokens a use) and any fee', () => {
    const loop = fetchingLoop();
    const bound = loop.llmCallBound!({ operation: 'sendUserMessage', message: 'hi' }, ctx()) as LLMCallBound;
    expect(bound.serverToolUses).toEqual({ webFetch: 2 });
    const plain = fromAnthropic(new Anthropic({ apiKey: 'k' }), { model: 'claude-sonnet-4-5', maxTokens: 1000 });
    const base = (
      plain.llmCallBound!({ operation: 'sendUserMessage', message: 'hi' }, ctx()) as { inputTokens: number }
    ).inputTokens;
    // Three passes, and results of 1 + 2 fetches of up to 8,000 tokens each.
    expect(bound.inputTokens).toBeGreaterThan(3 * (base + 1000) + 8000 * 3 - 3 * 100);
    // Anthropic bills a fetch's content as tokens only: the price data adds no fee.
    const catalog = createPricing();
    const tokensOnly = (p: typeof catalog) => worstCaseCost({ ...bound, serverToolUses: undefined }, p).costUsd!;
    expect(worstCaseCost(bound, catalog).costUsd!).toBeCloseTo(tokensOnly(catalog), 12);
    // A table with a fee of its own holds it for each fetch.
    const table = createPricing({
      prices: { 'claude-sonnet-4-5': { ...prices, webFetchPerUse: 0.002 } },
      catalog: false,
    });
    expect(worstCaseCost(bound, table).costUsd! - tokensOnly(table)).toBeCloseTo(0.004, 12);
  });

  it('charges an answer that fetched two pages its tokens, plus a fee where the table has one, within its hold', async () => {
    const tokens = 6000 * 3e-6 + 200 * 15e-6;
    const withFee = createPricing({
      prices: { 'claude-sonnet-4-5': { ...prices, webFetchPerUse: 0.002 } },
      catalog: false,
    });
    for (const [pricing, expected] of [
      [createPricing(), tokens],
      [withFee, tokens + 0.004],
    ] as const) {
      const lines: Array<Record<string, unknown>> = [];
      const sink = { write: () => undefined, journal: (j: unknown) => void lines.push(j as Record<string, unknown>) };
      const result = await agentOf(fetchingLoop(), { pricing, budget: { maxCostUsd: 1 }, sink, ledger: true }).runTurn(
        'What do pages a and b say?',
      );
      expect(result).toMatchObject({ outcome: 'end_of_turn', text: 'Both pages say hello.' });
      expect(result.usage.costUsd).toBeCloseTo(expected, 12);
      expect(result.usage.uncertainUsd).toBe(0);
      const answer = lines.find((l) => l.type === 'llm')!;
      expect(answer.usage).toMatchObject({ serverToolUses: { webFetch: 2 } });
      expect(answer.costUsd as number).toBeLessThanOrEqual(
        lines.find((l) => l.type === 'reserve')!.maxCostUsd as number,
      );
    }
  });

  it('under a cap, a table with no fetch fee refuses the request before it is sent, naming the fee to set', async () => {
    const noFee = createPricing({ prices: { 'claude-sonnet-4-5': prices }, catalog: false });
    const result = await agentOf(fetchingLoop(), { pricing: noFee, budget: { maxCostUsd: 1 } }).runTurn('Pages?');
    expect(result.outcome).toBe('error');
    expect(result.error?.message).toMatch(
      /pricing has no fee for the server tool uses the request allows \(webFetch: 2\) on model claude-sonnet-4-5 \(in a createPricing table: `webFetchPerUse`\)/,
    );
    // Never sent: nothing billed, nothing held.
    expect(result.usage).toMatchObject({ llmCalls: 0, costUsd: 0, uncertainUsd: 0 });
  });

  it('under a strict cap, refuses web fetch with no max_uses, or with no bound on what a page adds, by name', () => {
    const pricing = createPricing();
    const loop = (tool: Record<string, unknown>, extra: Partial<AnthropicOptions> = {}) =>
      fromAnthropic(new Anthropic({ apiKey: 'k' }), {
        model: 'claude-sonnet-4-5',
        request: { tools: [tool] },
        ...extra,
      });
    expect(() =>
      agentOf(loop({ type: 'web_fetch_20250910', name: 'web_fetch' }), { pricing, budget: { maxCostUsd: 1 } }),
    ).toThrow(/web_fetch_20250910 tool in request\.tools has no max_uses/);
    expect(() =>
      agentOf(loop({ type: 'web_fetch_20250910', name: 'web_fetch', max_uses: 2 }), {
        pricing,
        budget: { maxCostUsd: 1 },
      }),
    ).toThrow(/`max_content_tokens` on the web_fetch_20250910 tool in request\.tools, or `serverToolResultTokens`/);
    // serverToolResultTokens on the loop bounds it too.
    expect(() =>
      agentOf(loop({ type: 'web_fetch_20250910', name: 'web_fetch', max_uses: 2 }, { serverToolResultTokens: 5000 }), {
        pricing,
        budget: { maxCostUsd: 1 },
      }),
    ).not.toThrow();
  });
});
