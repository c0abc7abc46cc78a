import { Budget, type ExternalBudget, type Pricing, type SpentLimit, type UsageDelta } from '../../lib/index';
import { drive } from '../helpers/drive';

const pricing: Pricing = (u) => (u.inputTokens ?? 0) * 1e-6 + (u.outputTokens ?? 0) * 4e-6;
const bound = { inputTokens: 1000, maxOutputTokens: 1000, model: 'm' };

/** An external budget as a user (or the Redis batch) writes one: it records what it is asked. */
function recording(capsCost: boolean, refuse?: SpentLimit) {
  const calls: Array<[string, unknown, unknown]> = [];
  const budget: ExternalBudget = {
    capsCost,
    reserve: async (kind, hold) => {
      calls.push(['reserve', kind, hold]);
      return refuse;
    },
    charge: async (delta: UsageDelta, release) => {
      calls.push(['charge', delta.costUsd, release]);
      return undefined;
    },
  };
  return { budget, calls };
}

describe('external budgets and worst-case holds', () => {
  it("an external dollar cap (capsCost) gets each call's worst case with reserve, and its release with the charge", async () => {
    const ext = recording(true);
    const d = drive(
      { replies: [{ text: 'hi', model: 'm', usage: { inputTokens: 1000, outputTokens: 100 } }], bound },
      { pricing, externalBudgets: [ext.budget] },
    );
    expect((await d.adapter.runTurn('go')).outcome).toBe('end_of_turn');
    expect(ext.calls).toEqual([
      ['reserve', 'llm', { costUsd: 0.005 }],
      ['charge', 0.0014, { costUsd: 0.005 }],
    ]);
  });

  it('an external budget that does not cap dollars gets no hold', async () => {
    const ext = recording(false);
    const d = drive(
      { replies: [{ text: 'hi', model: 'm', usage: { inputTokens: 1000, outputTokens: 100 } }], bound },
      { pricing, externalBudgets: [ext.budget] },
    );
    await d.adapter.runTurn('go');
    expect(ext.calls[0]).toEqual(['reserve', 'llm', undefined]);
  });

  it('unknown cost under an external dollar cap fails closed, as under an in-process one', async () => {
    const ext = recording(true);
    const d = drive(
      { replies: [{ text: 'hi', usage: { inputTokens: 10, outputTokens: 1 } }] },
      {
        externalBudgets: [ext.budget],
      },
    );
    const result = await d.adapter.runTurn('go');
    expect(result.outcome).toBe('error');
    expect(result.error!.message).toContain('maxCostUsd cannot be enforced');
  });

  it('a refusal by the external budget releases the in-process strict hold', async () => {
    const refuse: SpentLimit = {
      limit: 'maxCostUsd',
      used: 1,
      max: 1,
      message: 'shared budget exceeded: $1.0000 of $1.0000',
    };
    const ext = recording(true, refuse);
    const pool = new Budget({ maxCostUsd: 1, strict: true });
    const d = drive(
      { replies: [{ text: 'hi', model: 'm', usage: { inputTokens: 1, outputTokens: 1 } }], bound },
      { pricing, externalBudgets: [ext.budget], sharedBudgets: [pool] },
    );
    const result = await d.adapter.runTurn('go');
    expect(result.outcome).toBe('budget_exceeded');
    expect(result.error!.message).toBe(
      'shared budget exceeded: $1.0000 of $1.0000; this run: cost $0.0000 after 0 LLM calls',
    );
    expect(d.agent.calls.filter((c) => c.op === 'sendUserMessage')).toEqual([]);
    // The in-process pool held the worst case before asking the external budget, and let it go when refused.
    expect(ext.calls[0]).toEqual(['reserve', 'llm', { costUsd: 0.005 }]);
    expect(pool.held).toBe(0);
  });
});
