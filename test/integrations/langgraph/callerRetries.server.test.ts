// The requests LangChain's ChatOpenAI makes on its own: its AsyncCaller retries a failed request
// (6 times by default) inside one chat model run, where the LangGraph mirror heard one call.
// Against a server that bills every request it takes in full (nothing for a 429), with the real
// ChatOpenAI at its DEFAULT settings given through lg.wrapModel: every request the server saw is
// one the mirror gated, what it reports billed is what the server billed for the answers, billed
// + uncertain covers the bill, and a strict cap is never crossed. A default ChatOpenAI the graph
// calls without wrapModel (observing the graph) is refused by name before any request.
import { createReactAgent } from '@langchain/langgraph/prebuilt';
import { ChatOpenAI } from '@langchain/openai';
import { BudgetExceededError, InvalidArgumentError } from 'agent-state-machine';
import { validateHistory } from 'agent-state-machine/history';
import { langGraphMirror, type LangGraphMirror, type LangGraphObserve } from '../../../lib/integrations/langgraph';
import { startBillingServer, type BillingServer, type Move } from '../../helpers/billingServer';
import { localPricing as pricing } from '../../helpers/localPricing';

const MAX = 400;

let billing: BillingServer;
beforeAll(async () => {
  billing = await startBillingServer(5_000);
});
afterAll(() => billing.server.close());
beforeEach(() => jest.spyOn(console, 'error').mockImplementation(() => undefined));
afterEach(() => jest.restoreAllMocks());

/** ChatOpenAI at its defaults (maxRetries 6 on its AsyncCaller), with the max tokens a strict cap needs. */
const llm = (streaming: boolean) =>
  new ChatOpenAI({
    model: 'gpt-local',
    apiKey: 'sk-local',
    configuration: { baseURL: billing.server.baseURL },
    maxTokens: MAX,
    streaming,
  });

/** Counts the model attempts the mirror let go (a `modelCallStart` that returned no stop). */
function gatedCount(lg: LangGraphMirror): { count: number } {
  const gated = { count: 0 };
  const start = lg.mirror.modelCallStart.bind(lg.mirror);
  jest.spyOn(lg.mirror, 'modelCallStart').mockImplementation(async (...args) => {
    const stop = await start(...args);
    if (stop === undefined) gated.count += 1;
    return stop;
  });
  return gated;
}

/** Two runs of one model call each (the agent has no tools), on one mirror. */
async function twoRuns(
  moves: Move[],
  budget: { maxCostUsd: number; strict: boolean },
  { streaming = false, observe = 'graph' as LangGraphObserve } = {},
) {
  billing.reset(moves);
  const before = billing.server.exchanges.length;
  const lg = langGraphMirror({ pricing, budget, logger: false, observe });
  const gated = gatedCount(lg);
  const agent = createReactAgent({ llm: lg.wrapModel(llm(streaming)), tools: lg.wrapTools([]) });
  const outcomes: unknown[] = [];
  for (let i = 0; i < 2; i++)
    outcomes.push(
      await lg
        .run(agent, { messages: [{ role: 'user', content: 'Say done' }] })
        .then((out) => out.messages.at(-1)?.content)
        .catch((e: unknown) => e),
    );
  expect(billing.server.rejected).toEqual([]);
  expect(validateHistory(lg.machine.history()).issues).toEqual([]);
  return { lg, outcomes, requests: billing.server.exchanges.length - before, gated: gated.count };
}

/** What the server billed for the requests it answered: every request of a run has the same body, so the same bill. */
const answeredShare = (moves: Move[], requests: number): number => {
  const answered = Array.from({ length: requests }, (_, i) => moves[i % moves.length]).filter((m) => m === 'ok').length;
  return (billing.billing.usd * answered) / requests;
};

describe("LangGraphMirror and ChatOpenAI's own retries (its AsyncCaller, at its defaults)", () => {
  it.each<[string, boolean, LangGraphObserve]>([
    ['observing the graph', false, 'graph'],
    ['observing the graph, streamed', true, 'graph'],
    ['observing what it wrapped', false, 'wrapped'],
  ])(
    '500 then ok, %s: every request the server saw was gated; billed is the bill of the answers, billed + uncertain covers the bill',
    async (_, streaming, observe) => {
      const moves: Move[] = ['500', 'ok'];
      const { lg, outcomes, requests, gated } = await twoRuns(
        moves,
        { maxCostUsd: 1, strict: true },
        { streaming, observe },
      );
      const billed = lg.usage.costUsd - lg.usage.uncertainUsd;
      process.stdout.write(
        `500 then ok (${observe}${streaming ? ', streamed' : ''}): ${requests} requests seen, ${gated} gated; server billed $${billing.billing.usd.toFixed(6)}, reported billed $${billed.toFixed(6)} + uncertain $${lg.usage.uncertainUsd.toFixed(6)}\n`,
      );
      expect(outcomes).toEqual(['done', 'done']);
      // Before: ChatOpenAI retried the 500 itself, 4 requests for 2 gated calls, the 500s billed and uncounted.
      expect(requests).toBe(4);
      expect(gated).toBe(requests);
      expect(lg.usage.llmCalls).toBe(requests);
      expect(billed).toBeCloseTo(answeredShare(moves, requests), 12);
      // The 500s came after the work: uncertain, at their holds.
      expect(lg.usage.uncertainUsd).toBeGreaterThan(0);
      expect(lg.usage.costUsd).toBeGreaterThanOrEqual(billing.billing.usd - 1e-12);
    },
    60_000,
  );

  it('500, 500, ok under a strict cap that holds two requests: the retry that would pass it is refused before it is sent', async () => {
    // One request's hold: what a 500 (after the work, no usage back) is charged, uncertain.
    billing.reset(['500', 'ok']);
    const probe = langGraphMirror({ pricing, logger: false });
    await probe.run(createReactAgent({ llm: probe.wrapModel(llm(false)), tools: [] }), {
      messages: [{ role: 'user', content: 'Say done' }],
    });
    const hold = probe.usage.uncertainUsd;
    expect(hold).toBeGreaterThan(0);
    const cap = hold * 2.5;
    const moves: Move[] = ['500', '500', 'ok'];
    const { lg, outcomes, requests, gated } = await twoRuns(moves, { maxCostUsd: cap, strict: true });
    process.stdout.write(
      `500, 500, ok under $${cap.toFixed(6)}: ${requests} requests seen, ${gated} gated; server billed $${billing.billing.usd.toFixed(6)}, reported $${lg.usage.costUsd.toFixed(6)} (uncertain $${lg.usage.uncertainUsd.toFixed(6)})\n`,
    );
    expect(outcomes[0]).toBeInstanceOf(BudgetExceededError);
    expect(outcomes[1]).toBeInstanceOf(BudgetExceededError);
    // Before: ChatOpenAI sent all three (two billed 500s and the answer) past the cap, one gated.
    expect(requests).toBe(2);
    expect(gated).toBe(requests);
    expect(billing.billing.usd).toBeLessThanOrEqual(cap + 1e-12);
    expect(lg.usage.costUsd).toBeGreaterThanOrEqual(billing.billing.usd - 1e-12);
    expect(lg.usage.costUsd - lg.usage.uncertainUsd).toBe(0);
  }, 60_000);

  it('a 429 with no retry-after is not retried (LangChain would not): one request, gated, released, the bill $0', async () => {
    const { lg, outcomes, requests, gated } = await twoRuns(['429', 'ok'], { maxCostUsd: 1, strict: true });
    expect((outcomes[0] as { status?: number }).status).toBe(429);
    expect(outcomes[1]).toBe('done');
    expect(requests).toBe(2);
    expect(gated).toBe(requests);
    expect(lg.usage.uncertainUsd).toBe(0);
    expect(lg.usage.releasedUsd).toBeGreaterThan(0);
    expect(lg.usage.costUsd).toBeCloseTo(billing.billing.usd, 12);
  }, 60_000);

  it("a call's own maxRetries (withConfig) on a model made with maxRetries 0: its retries are the mirror's too", async () => {
    billing.reset(['500', 'ok']);
    const before = billing.server.exchanges.length;
    const lg = langGraphMirror({ pricing, budget: { maxCostUsd: 1, strict: true }, logger: false });
    const gated = gatedCount(lg);
    const model = new ChatOpenAI({
      model: 'gpt-local',
      apiKey: 'sk-local',
      configuration: { baseURL: billing.server.baseURL },
      maxTokens: MAX,
      maxRetries: 0,
    }).withConfig({ maxRetries: 2 });
    const out = await lg.run(createReactAgent({ llm: lg.wrapModel(model), tools: [] }), {
      messages: [{ role: 'user', content: 'Say done' }],
    });
    expect(out.messages.at(-1)?.content).toBe('done');
    expect(billing.server.exchanges.length - before).toBe(2);
    expect(gated.count).toBe(2);
    expect(lg.usage.uncertainUsd).toBeGreaterThan(0);
  }, 60_000);

  it('refuses a default ChatOpenAI the graph calls without lg.wrapModel, by name, before any request', async () => {
    billing.reset(['ok']);
    const before = billing.server.exchanges.length;
    const lg = langGraphMirror({ pricing, logger: false });
    const error = await lg
      .run(createReactAgent({ llm: llm(false), tools: [] }), { messages: [{ role: 'user', content: 'Say done' }] })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidArgumentError);
    expect((error as Error).message).toMatch(
      /ChatOpenAI the graph called\) maxRetries` to be 0, or the model given to the graph through lg\.wrapModel\(model\).*got `6`/,
    );
    expect(billing.server.exchanges.length).toBe(before);
    expect(lg.result).toMatchObject({ outcome: 'error' });
  });

  it('refuses to wrap a ChatOpenAI whose openai client retries on its own (configuration.maxRetries)', () => {
    const lg = langGraphMirror({ pricing, logger: false });
    const model = new ChatOpenAI({
      model: 'gpt-local',
      apiKey: 'sk-local',
      configuration: { baseURL: billing.server.baseURL, maxRetries: 3 },
    });
    expect(() => lg.wrapModel(model)).toThrow(
      /`model \(ChatOpenAI\) configuration\.maxRetries` to be unset or 0: the openai client would retry failed requests itself.*got `3`/,
    );
  });
});
