import OpenAI from 'openai';
import type { TransitionRecord } from 'agent-state-machine';
import type { LLMCallBound, Usage } from '../../../lib/agent/AgentLoop';
import { worstCaseCost } from '../../../lib/agent/money/worstCaseCost';
import { fromOpenAIResponses, type OpenAIResponsesOptions } from '../../../lib/integrations/openai';
import {
  startOpenAIResponsesServer,
  type OpenAIResponsesServer,
} from '../../../examples/servers/openaiResponsesServer';
import { agentOf } from '../../helpers/sdkLoopTest';

// OpenAI Responses' web search is billed per call, and its results grow the request's input: a
// request that offers it is held at a worst case that covers both — `max_tool_calls` searches
// at their fee, and the input their results add — or, when nothing bounds them, a strict cap
// refuses the loop by name, saying what to set.

const ctx = () => ({ signal: new AbortController().signal, turn: 1, attempt: 1 });
// $0.40 / $1.60 per million tokens and a cent a search (gpt-4.1-mini's prices and search fee).
const PRICES = { inputPerMTok: 0.4, outputPerMTok: 1.6, webSearchPerUse: 0.01 };
const pricing = (usage: Usage): number | undefined =>
  usage.inputTokens === undefined || usage.outputTokens === undefined
    ? undefined
    : (usage.inputTokens * PRICES.inputPerMTok + usage.outputTokens * PRICES.outputPerMTok) / 1e6 +
      (usage.serverToolUses?.webSearch ?? 0) * PRICES.webSearchPerUse;

const searching = (extra: Partial<OpenAIResponsesOptions> = {}): OpenAIResponsesOptions => ({
  model: 'gpt-4.1-mini',
  maxTokens: 500,
  serverToolResultTokens: 4000,
  request: { tools: [{ type: 'web_search' }], max_tool_calls: 2 },
  ...extra,
});

let server: OpenAIResponsesServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe('fromOpenAIResponses with web search', () => {
  it('holds a request that offers web search at a worst case covering max_tool_calls fees and their results', () => {
    const client = new OpenAI({ apiKey: 'k' });
    const plain = fromOpenAIResponses(client, { model: 'gpt-4.1-mini', maxTokens: 500 });
    const base = (plain.llmCallBound!({ operation: 'sendUserMessage', message: 'hi' }, ctx()) as LLMCallBound)
      .inputTokens;
    const loop = fromOpenAIResponses(client, searching());
    const bound = loop.llmCallBound!({ operation: 'sendUserMessage', message: 'hi' }, ctx()) as LLMCallBound;
    expect(bound.serverToolUses).toEqual({ webSearch: 2 });
    // The tool is in the request as sent; three passes, and results of 1 + 2 searches.
    expect(bound.inputTokens).toBeGreaterThanOrEqual(3 * (base + 500) + 4000 * 3);
    const worst = worstCaseCost(bound, pricing).costUsd!;
    const tokensOnly = worstCaseCost({ ...bound, serverToolUses: undefined }, pricing).costUsd!;
    expect(worst - tokensOnly).toBeCloseTo(0.02, 10);
  });

  it('under a strict cap, refuses a loop whose web search nothing bounds, by name and with what to set', () => {
    const client = new OpenAI({ apiKey: 'k' });
    const strict = { pricing, budget: { maxCostUsd: 1 } };
    const noMax = fromOpenAIResponses(client, searching({ request: { tools: [{ type: 'web_search' }] } }));
    expect(() => agentOf(noMax, strict)).toThrow(
      /the web_search tool in request\.tools may be used any number of times.*no max_tool_calls.*`max_tool_calls` in `request`/,
    );
    const noResults = fromOpenAIResponses(client, searching({ serverToolResultTokens: undefined }));
    expect(() => agentOf(noResults, strict)).toThrow(/OpenAI states no bound.*`serverToolResultTokens` on the loop/);
    const code = fromOpenAIResponses(
      client,
      searching({ request: { tools: [{ type: 'code_interpreter', container: { type: 'auto' } }], max_tool_calls: 2 } }),
    );
    expect(() => agentOf(code, strict)).toThrow(/the code_interpreter tool in request\.tools is billed by a measure/);
    // Off strict it runs; its bound is unknown, and says why.
    expect(() => agentOf(noMax, { pricing, budget: { maxCostUsd: 1, strict: false } })).not.toThrow();
    expect(() => noMax.llmCallBound!({ operation: 'sendUserMessage', message: 'hi' }, ctx())).toThrow(
      /fromOpenAIResponses cannot bound this request: .*max_tool_calls/,
    );
  });

  it('refuses a serverToolResultTokens that is not a positive integer, naming it', () => {
    expect(() => fromOpenAIResponses(new OpenAI({ apiKey: 'k' }), searching({ serverToolResultTokens: 0 }))).toThrow(
      /options\.serverToolResultTokens.*a positive integer of tokens/,
    );
  });

  it('against the local server: two searches charged at their fee beside the tokens, within the hold of a strict cap', async () => {
    server = await startOpenAIResponsesServer({
      respond: () => ({
        webSearches: ['eclipse 2026', 'eclipse path', 'a third the API ignores'],
        text: 'The next one is in August.',
        usage: { input_tokens: 9000, output_tokens: 40 },
      }),
    });
    const loop = fromOpenAIResponses(new OpenAI({ apiKey: 'sk-local', baseURL: server.baseURL }), searching());
    const records: TransitionRecord<string>[] = [];
    const agent = agentOf(loop, { pricing, budget: { maxCostUsd: 0.5 }, sink: { write: (r) => void records.push(r) } });
    const result = await agent.runTurn('When is the next eclipse?');
    expect(result.outcome).toBe('end_of_turn');
    expect(result.usage.costUsd).toBeCloseTo((9000 * 0.4 + 40 * 1.6) / 1e6 + 2 * 0.01, 12);
    expect(result.usage.uncertainUsd).toBe(0);
    // Nothing passed its bound (without the searches in it, the answer's cost would have): no boundExceeded fact.
    expect(records.length).toBeGreaterThan(2);
    expect(JSON.stringify(records)).not.toContain('boundExceeded');
    expect(server.exchanges[0]!.body.max_tool_calls).toBe(2);
    expect(server.rejected).toEqual([]);
  });
});
