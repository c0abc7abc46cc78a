import fc from 'fast-check';
import {
  AgentWithStateMachine,
  Budget,
  createScriptedAgent,
  DEFAULT_TABLE,
  extendTable,
  WRAP_UP_EXTENSION,
  type BudgetLimits,
  type Pricing,
  type ScriptedReply,
  type Usage,
} from '../../lib/index';

// $1 per million input tokens, $4 per million output tokens; every request is bounded at 1,000
// input tokens and 1,000 output tokens ($0.005), and every reply stays within its bound.
const pricing: Pricing = (u) => (u.inputTokens ?? 0) * 1e-6 + (u.outputTokens ?? 0) * 4e-6;
const bound = { inputTokens: 1000, maxOutputTokens: 1000, model: 'm' };
const TABLE = extendTable(DEFAULT_TABLE, WRAP_UP_EXTENSION);

const usage = fc.record({
  inputTokens: fc.integer({ min: 0, max: 1000 }),
  outputTokens: fc.integer({ min: 0, max: 1000 }),
});
const toolReply = fc.tuple(usage, fc.integer({ min: 1, max: 3 })).map(([u, n]): ScriptedReply => ({
  text: 'working',
  toolCalls: Array.from({ length: n }, (_, i) => ({ id: `c${i}`, name: 'look', input: { i } })),
  model: 'm',
  usage: u,
}));
const script = fc.record({
  // Tool rounds, then a text answer: a run that is never stopped ends end_of_turn.
  steps: fc.array(toolReply, { maxLength: 12 }),
  last: usage,
  final: usage,
  // At least the final call's worst case ($0.005), so that the adapter can be made.
  cap: fc.integer({ min: 5000, max: 60_000 }).map((n) => n / 1e6),
  minOutputTokens: fc.constantFrom(1, 256, 1000),
});

type Script = { steps: ScriptedReply[]; last: Usage; final: Usage; cap: number; minOutputTokens: number };

async function run(s: Script, limits: BudgetLimits) {
  const agent = createScriptedAgent({
    replies: [...s.steps, { text: 'done', model: 'm', usage: s.last }],
    finalReply: { text: 'the answer so far', model: 'm', usage: s.final },
    bound,
    tools: { look: { output: 'seen' } },
    sleep: async () => undefined,
  });
  // The cap is the pool's too: each run keeps its final call's hold inside it.
  const pool = new Budget({ maxCostUsd: s.cap, strict: true }, { label: 'pool' });
  const adapter = new AgentWithStateMachine(agent, {
    pricing,
    table: TABLE,
    logger: false,
    minOutputTokens: s.minOutputTokens,
    budget: limits,
    sharedBudgets: [pool],
  });
  const result = await adapter.runTurn('go');
  return { result, pool, adapter, agent };
}

describe('budget.wrapUp under a strict cap (property-based)', () => {
  it('never spends past the cap, and every run a cap would have stopped ends wrapped_up with a text answer', async () => {
    let stopped = 0;
    await fc.assert(
      fc.asyncProperty(script, async (s) => {
        const plain = await run(s, { maxCostUsd: s.cap, strict: true });
        const wrapped = await run(s, { maxCostUsd: s.cap, strict: true, wrapUp: true });
        const { result, pool, adapter } = wrapped;
        expect(result.usage.costUsd).toBeLessThanOrEqual(s.cap + 1e-12);
        expect(pool.usage.costUsd).toBeLessThanOrEqual(s.cap + 1e-12);
        expect(['end_of_turn', 'wrapped_up']).toContain(result.outcome);
        if (plain.result.outcome === 'budget_exceeded') {
          stopped += 1;
          expect(result.outcome).toBe('wrapped_up');
          expect(result.text).toBe('the answer so far');
        }
        if (result.outcome === 'wrapped_up') {
          const path = adapter.machine.history().map((r) => r.to as string);
          expect(path.slice(-2)).toEqual(['WrappingUp', 'EndOfTurn']);
          expect(adapter.machine.history().at(-1)!.data).toMatchObject({ answer: 'the answer so far' });
        }
        // The final call's hold is released when the run ends.
        expect(pool.held).toBe(0);
      }),
      { numRuns: 200 },
    );
    // The scripts reach the cap often enough for the property to say something.
    expect(stopped).toBeGreaterThan(20);
  });
});
