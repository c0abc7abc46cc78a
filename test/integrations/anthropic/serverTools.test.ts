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
