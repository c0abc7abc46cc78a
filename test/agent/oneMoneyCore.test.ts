import { AgentWithStateMachine } from '../../lib/agent/AgentWithStateMachine';
import { createScriptedAgent } from '../../lib/agent/createScriptedAgent';
import type { AgentLoop, Pricing } from '../../lib/agent/AgentLoop';
import type { ExternalBudget } from '../../lib/agent/money/ExternalBudget';
import { StepMirror } from '../../lib/agent/StepMirror';
import { emptyUsage } from '../../lib/agent/UsageTotals';

// Issue 50, item 5: the money of an LLM call is computed by one core for both drivers. Where the
// adapter and the mirror differed before they shared it, each test here shows they now agree.

const pricing: Pricing = (u) => (u.inputTokens ?? 0) * 1e-6 + (u.outputTokens ?? 0) * 4e-6;
const clock = (): number => 1000;

function capture(): {
  journal: Array<Record<string, unknown>>;
  sink: { write(e: unknown): void; journal(j: unknown): void };
} {
  const journal: Array<Record<string, unknown>> = [];
  return { journal, sink: { write: () => undefined, journal: (j) => void journal.push(j as Record<string, unknown>) } };
}

describe('the ledger default (ledgerDefaultMaxCostUsd)', () => {
  it('a call with no bound states the default in its reserve line on both drivers, the same line', async () => {
    const byAdapter = capture();
    const agent = new AgentWithStateMachine(
      createScriptedAgent({ replies: [{ text: 'done', usage: { inputTokens: 10, outputTokens: 5 } }] }),
      { logger: false, pricing, clock, sink: byAdapter.sink, ledger: true, ledgerDefaultMaxCostUsd: 0.05 },
    );
    await agent.runTurn('go');

    const byMirror = capture();
    const mirror = new StepMirror({
      logger: false,
      pricing,
      clock,
      sink: byMirror.sink,
      ledger: true,
      ledgerDefaultMaxCostUsd: 0.05,
    });
    mirror.runStart('go');
    expect(await mirror.modelCallStart()).toBeUndefined();
    mirror.modelResponse({ text: 'done', usage: { inputTokens: 10, outputTokens: 5 } });
    mirror.runEnd();

    const reserve = (lines: Array<Record<string, unknown>>) => lines.find((l) => l.type === 'reserve')!;
    expect(reserve(byMirror.journal)).toMatchObject({ maxCostUsd: 0.05, defaulted: true });
    // Each says why its call had no bound in its own words; the money is the same.
    const { unknown: a, ...adapterLine } = reserve(byAdapter.journal);
    const { unknown: m, ...mirrorLine } = reserve(byMirror.journal);
    expect(mirrorLine).toEqual(adapterLine);
    expect([a, m]).toEqual([
      'the loop has no llmCallBound',
      'the framework gave modelCallStart no bound for this call',
    ]);
  });

  it('is refused by name when it is no non-negative number, as the adapter refuses it', () => {
    expect(() => new StepMirror({ logger: false, ledgerDefaultMaxCostUsd: -1 })).toThrow('ledgerDefaultMaxCostUsd');
  });
});

describe('an external budget whose figures cannot be read for the note (budget.visible)', () => {
  const failing = (): ExternalBudget => ({
    capsCost: true,
    endings: { visible: true },
    reserve: async () => undefined,
    charge: async () => undefined,
    figures: () => Promise.reject(new Error('Redis is unreachable')),
  });
  const fine = (): ExternalBudget => ({
    reserve: async () => undefined,
    charge: async () => undefined,
    figures: async () => ({ limits: { maxCostUsd: 1 }, usage: emptyUsage() }),
  });

  it('ends the run in Error naming that budget, on both drivers (the adapter called it a bug of its own)', async () => {
    const agent = new AgentWithStateMachine(
      createScriptedAgent({ bound: { inputTokens: 10, maxOutputTokens: 10, model: 'm' }, replies: [{ text: 'done' }] }),
      { logger: false, pricing, externalBudgets: [fine(), failing()] },
    );
    const byAdapter = await agent.runTurn('go');

    const mirror = new StepMirror({
      logger: false,
      pricing,
      externalBudgets: [fine(), failing()],
      honours: { budgetNote: true },
    });
    mirror.runStart('go');
    const planned = await mirror.modelCallPlan(() => ({ inputTokens: 10, maxOutputTokens: 10, model: 'm' }));
    expect(planned).toBeInstanceOf(Error);

    const said = 'externalBudgets[1].figures() failed: Redis is unreachable';
    expect(byAdapter.outcome).toBe('error');
    expect(byAdapter.error?.message).toBe(said);
    expect(mirror.result?.outcome).toBe('error');
    expect(mirror.result?.error?.message).toBe(said);
  });
});

describe("a hook's LLM call (ctx.llm) past its bound", () => {
  it("warns as the loop's own call and a mirrored one do, when no strict cap stops the run on it", async () => {
    const warnings: string[] = [];
    const logger = {
      error: () => undefined,
      info: () => undefined,
      debug: () => undefined,
      warn: (message: string) => void warnings.push(message),
    };
    let asked = false;
    const loop: AgentLoop = {
      sendUserMessage: async () =>
        asked
          ? { text: 'done', usage: { inputTokens: 1, outputTokens: 1 } }
          : ((asked = true),
            { toolCalls: [{ id: 'c1', name: 'ask', input: {} }], usage: { inputTokens: 1, outputTokens: 1 } }),
      sendToolResults: async () => ({ text: 'done', usage: { inputTokens: 1, outputTokens: 1 } }),
      async runTool(call, ctx) {
        // The server counted 50 output tokens for a request bounded at 10.
        await ctx.llm!.call({ inputTokens: 10, maxOutputTokens: 10, model: 'm' }, async () => ({
          usage: { inputTokens: 10, outputTokens: 50 },
          model: 'm',
        }));
        return { callId: call.id, output: 'ok' };
      },
    };
    const agent = new AgentWithStateMachine(loop, { logger, pricing, budget: { maxCostUsd: 1, strict: false } });
    const result = await agent.runTurn('go');
    expect(result.outcome).toBe('end_of_turn');
    expect(warnings.some((w) => w.includes('passed its bound') && w.includes("the hook's bound"))).toBe(true);
  });
});

describe('a response whose usage is malformed, under a cap that measures usage', () => {
  // A bad number where a cap measures usage would leave the cap blind: the adapter refused it,
  // the mirror charged the valid fields and went on.
  const bad = { text: 'x', usage: { inputTokens: 10, outputTokens: Number.NaN } };
  const message =
    'sendUserMessage broke its contract: reported bad usage: usage.outputTokens must be a non-negative number, got `NaN` (number)';

  it('ends the run in Error naming the field, on both drivers', async () => {
    const agent = new AgentWithStateMachine(createScriptedAgent({ replies: [bad] }), {
      logger: false,
      pricing,
      budget: { maxCostUsd: 1, strict: false },
    });
    const byAdapter = await agent.runTurn('go');

    const mirror = new StepMirror({ logger: false, pricing, budget: { maxCostUsd: 1, strict: false } });
    mirror.runStart('go');
    expect(await mirror.modelCallStart()).toBeUndefined();
    mirror.modelResponse(bad);
    const byMirror = mirror.runEnd();

    for (const result of [byAdapter, byMirror]) {
      expect(result.outcome).toBe('error');
      expect(result.error!.message).toBe(message);
    }
    expect(mirror.usage.inputTokens).toBe(agent.usage.inputTokens);
  });

  it('without such a cap, is charged by its valid fields and noted on both drivers', async () => {
    const agent = new AgentWithStateMachine(createScriptedAgent({ replies: [bad] }), { logger: false, pricing });
    const byAdapter = await agent.runTurn('go');
    const mirror = new StepMirror({ logger: false, pricing });
    mirror.runStart('go');
    expect(await mirror.modelCallStart()).toBeUndefined();
    mirror.modelResponse(bad);
    const byMirror = mirror.runEnd();
    expect([byAdapter.outcome, byMirror.outcome]).toEqual(['end_of_turn', 'end_of_turn']);
    expect(mirror.usage.inputTokens).toBe(10);
    expect(agent.usage.inputTokens).toBe(10);
  });
});

describe('an answer the loop refused, whose usage came back (answeredUsage on the error)', () => {
  // The provider billed it: charged at its usage, not released as an unbilled 400.
  const bound = { inputTokens: 1000, maxOutputTokens: 1000, model: 'm' };

  /** The refusal of an answer that reported `usage`, on the adapter and on the mirror, each with the same options. */
  async function refusedOnBoth(
    usage: { inputTokens: number; outputTokens: number },
    budget: { maxCostUsd: number; strict?: boolean },
  ) {
    const refused = () => Object.assign(new Error('refused'), { status: 400, answeredUsage: usage, model: 'm' });
    const options = { logger: false, pricing, clock, journal: true, budget } as const;
    const byAdapter = capture();
    const scripted = createScriptedAgent({ bound, replies: [] });
    const loop: AgentLoop = { ...scripted, sendUserMessage: () => Promise.reject(refused()) };
    const adapter = await new AgentWithStateMachine(loop, { ...options, sink: byAdapter.sink }).runTurn('go');

    const byMirror = capture();
    const mirror = new StepMirror({ ...options, sink: byMirror.sink });
    mirror.runStart('go');
    expect(await mirror.modelCallStart(bound)).toBeUndefined();
    mirror.modelCallFailed(refused(), { willRetry: false });
    const mirrored = mirror.runEnd();
    const line = (lines: Array<Record<string, unknown>>) => lines.find((l) => l.type === 'llm')!;
    return { results: [adapter, mirrored], lines: [line(byAdapter.journal), line(byMirror.journal)] };
  }

  it('is billed at that usage on both drivers, and journaled with it', async () => {
    const { results, lines } = await refusedOnBoth({ inputTokens: 100, outputTokens: 20 }, { maxCostUsd: 1 });
    // 100 × $1 + 20 × $4 per million.
    for (const { usage } of results)
      expect(usage).toMatchObject({
        inputTokens: 100,
        outputTokens: 20,
        costUsd: 0.00018,
        uncertainUsd: 0,
        releasedUsd: 0,
      });
    for (const l of lines)
      expect(l).toMatchObject({ usage: { inputTokens: 100, outputTokens: 20 }, costUsd: expect.closeTo(0.00018, 12) });
  });

  it('past its bound, stops the run under a strict cap on both drivers, the fact in its line', async () => {
    const { results, lines } = await refusedOnBoth(
      { inputTokens: 100, outputTokens: 5000 },
      { maxCostUsd: 1, strict: true },
    );
    expect(results.map((r) => r.outcome)).toEqual(['budget_exceeded', 'budget_exceeded']);
    for (const l of lines)
      expect(l).toMatchObject({
        usage: { inputTokens: 100, outputTokens: 5000 },
        boundExceeded: { outputTokens: 5000 },
      });
  });
});
