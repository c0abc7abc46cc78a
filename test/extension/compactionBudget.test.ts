import fc from 'fast-check';
import {
  AgentWithStateMachine,
  COMPACTION_EXTENSION,
  DEFAULT_TABLE,
  extendTable,
  runBatch,
  UnboundedCallsError,
  type AgentLoop,
  type LLMCallBound,
  type Pricing,
  type TransitionRecord,
} from 'agent-state-machine';

// A compaction that summarises with an LLM gets the run's budgets (`ctx.llm`): its call's worst
// case is held before it starts and charged after, as the adapter's own calls. A strict cap with
// the `compact` option refuses a loop that does not say what calls its compact makes.

const TABLE = extendTable(DEFAULT_TABLE, COMPACTION_EXTENSION);
const pricing: Pricing = (u) => (u.inputTokens ?? 0) * 1e-6 + (u.outputTokens ?? 0) * 4e-6;

function overflow(): Error {
  return Object.assign(new Error("400 This model's maximum context length is 100 tokens."), {
    status: 400,
    code: 'context_length_exceeded',
  });
}

interface Plan {
  /** The main calls' bound. */
  main: LLMCallBound;
  /** The summarising call's bound. */
  summary: LLMCallBound;
  /** The output tokens the summariser would write, if the request let it. */
  summaryWants: number;
}

/**
 * A loop whose every turn first overflows the context, then compacts with a summarising LLM call
 * through `ctx.llm`. The "provider" bills every call: its input bound, and the output tokens the
 * request allows (the main calls use them all; the summariser what it wants, up to the max).
 */
function summarisingLoop(plan: Plan, calls: AgentLoop['compactCalls']) {
  const billed = { usd: 0, summaries: 0 };
  let overflowNext = true;
  const bill = (inputTokens: number, outputTokens: number) => {
    billed.usd += pricing({ inputTokens, outputTokens }, { model: 'm' })!;
    return { inputTokens, outputTokens };
  };
  const loop: AgentLoop = {
    compactCalls: calls,
    llmCallBound: (_call, ctx) => ({
      ...plan.main,
      maxOutputTokens: Math.min(plan.main.maxOutputTokens, ctx.maxOutputTokens ?? Infinity),
    }),
    async sendUserMessage(_message, ctx) {
      if (overflowNext) {
        overflowNext = false;
        throw overflow();
      }
      overflowNext = true;
      const out = Math.min(plan.main.maxOutputTokens, ctx.maxOutputTokens ?? Infinity);
      return { text: 'ok', usage: bill(plan.main.inputTokens, out), model: 'm' };
    },
    sendToolResults: async () => ({ text: 'n/a' }),
    runTool: async (call) => ({ callId: call.id, output: '' }),
    async compact(_info, ctx) {
      await ctx.llm.call(plan.summary, async (c) => {
        billed.summaries++;
        const out = Math.min(plan.summaryWants, plan.summary.maxOutputTokens, c.maxOutputTokens ?? Infinity);
        return { usage: bill(plan.summary.inputTokens, out), model: 'm' };
      });
      return { removedMessages: 2 };
    },
  };
  return { loop, billed };
}

const bound = (inputMin: number, inputMax: number, outputMin: number, outputMax: number) =>
  fc.record({
    inputTokens: fc.integer({ min: inputMin, max: inputMax }),
    maxOutputTokens: fc.integer({ min: outputMin, max: outputMax }),
    model: fc.constant('m'),
  });

describe('a compaction that calls an LLM through ctx.llm', () => {
  it('never passes a strict cap: its call is held before it starts, and charged after', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          main: bound(100, 4000, 100, 2000),
          summary: bound(1, 8000, 16, 4000),
          summaryWants: fc.integer({ min: 0, max: 4000 }),
        }),
        fc.integer({ min: 1, max: 200 }).map((n) => n / 1000),
        async (plan, cap) => {
          const { loop, billed } = summarisingLoop(plan, 'budgeted');
          const records: TransitionRecord<string>[] = [];
          const agent = new AgentWithStateMachine(loop, {
            table: TABLE,
            compact: true,
            logger: false,
            pricing,
            minOutputTokens: 16,
            budget: { maxCostUsd: cap },
            sink: { write: (r) => void records.push(r) },
          });
          let outcome = 'end_of_turn';
          // Each turn costs at least $0.001 (its main call's hold, charged for the overflowed attempt, and the call made again): the cap ends it within 200 turns.
          for (let turn = 0; turn < 1000 && outcome === 'end_of_turn'; turn++)
            outcome = (await agent.runTurn(`turn ${turn}`)).outcome;
          expect(outcome).toBe('budget_exceeded');
          expect(billed.usd).toBeLessThanOrEqual(cap + 1e-12);
          // Charged at least what was billed: each overflowed attempt (it left, unpriced) at its hold.
          expect(agent.usage.costUsd! + 1e-12).toBeGreaterThanOrEqual(billed.usd);
          if (billed.summaries > 0)
            expect(
              records.some((r) =>
                Array.isArray((r.data as { compactionCalls?: unknown } | undefined)?.compactionCalls),
              ),
            ).toBe(true);
        },
      ),
      { numRuns: 60 },
    );
  });

  it('a summary the budget has no room for is not made: the run ends budget_exceeded, naming the cap', async () => {
    const plan: Plan = {
      main: { inputTokens: 100, maxOutputTokens: 100, model: 'm' },
      summary: { inputTokens: 100_000, maxOutputTokens: 100, model: 'm' },
      summaryWants: 100,
    };
    const { loop, billed } = summarisingLoop(plan, 'budgeted');
    const agent = new AgentWithStateMachine(loop, {
      table: TABLE,
      compact: true,
      logger: false,
      pricing,
      budget: { maxCostUsd: 0.05 },
    });
    const result = await agent.runTurn('hello');
    expect(result.outcome).toBe('budget_exceeded');
    expect(billed.summaries).toBe(0);
    expect(result.error?.message).toMatch(/\$0\.05/);
  });
});

describe('a strict cap with the `compact` option', () => {
  const { loop } = summarisingLoop(
    {
      main: { inputTokens: 1, maxOutputTokens: 16, model: 'm' },
      summary: { inputTokens: 1, maxOutputTokens: 16, model: 'm' },
      summaryWants: 1,
    },
    undefined,
  );

  it('refuses a loop that does not say what calls its compact makes, naming compact and compactCalls', () => {
    const make = () =>
      new AgentWithStateMachine(loop, { table: TABLE, compact: true, pricing, budget: { maxCostUsd: 1 } });
    expect(make).toThrow(UnboundedCallsError);
    expect(make).toThrow(
      "budget.maxCostUsd is a strict cap (caps are strict by default), so each LLM call's worst case is held before it starts, but the `compact` option is on and the loop's compact may call an LLM the cap does not hold: give `compactCalls` on the loop: 'none' when its compact makes no LLM call, 'budgeted' when it makes them through ctx.llm, or set `strict: false` beside `maxCostUsd` to accept an overshoot of at most one LLM response per run in flight",
    );
    // Without compaction, or with strict: false, it is taken.
    expect(() => new AgentWithStateMachine(loop, { pricing, budget: { maxCostUsd: 1 } })).not.toThrow();
    expect(
      () =>
        new AgentWithStateMachine(loop, {
          table: TABLE,
          compact: true,
          pricing,
          budget: { maxCostUsd: 1, strict: false },
        }),
    ).not.toThrow();
  });

  it('refuses it in a batch before any run starts, naming the task', async () => {
    await expect(
      runBatch([{ id: 'a', input: 'hi', agent: loop }], {
        table: TABLE,
        compact: true,
        pricing,
        total: { maxCostUsd: 1 },
        logger: false,
      }),
    ).rejects.toThrow(/total\.maxCostUsd is a strict cap .* give `compactCalls` on the loop/);
  });

  it('refuses a compactCalls it does not know', () => {
    expect(
      () => new AgentWithStateMachine({ ...loop, compactCalls: 'some' as never }, { table: TABLE, compact: true }),
    ).toThrow("Expected `agent.compactCalls` to be 'none' or 'budgeted'");
  });

  it('charges a summary reported after the fact (made outside ctx.llm), then ends the run: the cap could not hold it', async () => {
    let calls = 0;
    const outside: AgentLoop = {
      ...loop,
      compactCalls: 'none',
      async sendUserMessage() {
        if (calls++ === 0) throw overflow();
        return { text: 'ok', usage: { inputTokens: 1, outputTokens: 1 }, model: 'm' };
      },
      compact: async () => ({ usage: { inputTokens: 1000, outputTokens: 100 }, model: 'm' }),
    };
    const agent = new AgentWithStateMachine(outside, {
      table: TABLE,
      compact: true,
      logger: false,
      pricing,
      budget: { maxCostUsd: 1 },
    });
    const result = await agent.runTurn('hello');
    expect(result.outcome).toBe('error');
    expect(result.error?.message).toMatch(
      /compact broke its contract: it reported the usage of an LLM call made outside ctx\.llm/,
    );
    // The summary; the overflowed attempt, refused with a 400 before the model ran, is released (its hold: 1 input token, 16 output).
    expect(agent.usage.costUsd).toBeCloseTo(1000e-6 + 400e-6, 12);
    expect(agent.usage.releasedUsd).toBeCloseTo(65e-6, 12);
  });
});
