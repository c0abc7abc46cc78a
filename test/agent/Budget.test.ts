import fc from 'fast-check';
import { Budget, type UsageDelta } from '../../lib/index';
import { spentLimit } from '../../lib/agent/BudgetLimits';
import { addUsage, emptyUsage } from '../../lib/agent/UsageTotals';

describe('Budget', () => {
  it('.charge() adds up usage and .spent() reports the first limit reached', () => {
    const budget = new Budget({ maxCostUsd: 0.3 });
    budget.charge({ costUsd: 0.1, llmCalls: 1, inputTokens: 5 });
    budget.charge({ costUsd: 0.2, llmCalls: 1 });
    expect(budget.usage).toEqual({
      inputTokens: 5,
      outputTokens: 0,
      costUsd: 0.3,
      toolCalls: 0,
      llmCalls: 2,
      wallMs: 0,
      uncertainUsd: 0,
      releasedUsd: 0,
      unpricedCalls: 0,
    });
    expect(budget.spent()!.message).toBe('budget exceeded: $0.3000 of $0.3000 after 2 LLM calls');
  });

  it('.usage is a copy', () => {
    const budget = new Budget();
    budget.usage.costUsd = 100;
    expect(budget.usage.costUsd).toBe(0);
  });

  it('measures wall time as elapsed time with elapsedWall, ignoring charged wall time', () => {
    let now = 1000;
    const budget = new Budget({ maxWallMs: 500 }, { label: 'shared budget', elapsedWall: { clock: () => now } });
    budget.charge({ wallMs: 10_000 });
    expect(budget.spent()).toBeUndefined();
    now = 1500;
    expect(budget.usage.wallMs).toBe(500);
    expect(budget.spent()!.message).toBe('shared budget exceeded: 500 ms of wall time, of 500 ms after 0 LLM calls');
  });

  it('.charge() refuses what would corrupt the totals, naming it', () => {
    const budget = new Budget({ maxCostUsd: 1 });
    expect(() => budget.charge({ costUsd: Number.NaN })).toThrow(
      'Expected `delta.costUsd` to be a non-negative finite number, got `NaN` (number)',
    );
    expect(() => budget.charge({ llmCalls: -1 })).toThrow(
      'Expected `delta.llmCalls` to be a non-negative finite number, got `-1` (number)',
    );
    expect(() => budget.charge(null as never)).toThrow('Expected `delta` to be an object of usage numbers, got `null`');
    expect(budget.usage.costUsd).toBe(0);
  });

  it('rejects bad limits, naming them', () => {
    expect(() => new Budget({ maxLlmCalls: -1 })).toThrow(
      'Expected `budget.maxLlmCalls` to be a non-negative finite number, got `-1` (number)',
    );
  });

  it('.charge() checks the same keys as Object.keys gives, and .spent() answers as spentLimit (property-based)', () => {
    const value = fc.oneof(fc.nat(50), fc.constantFrom<unknown>(-1, Number.NaN, Infinity, '3', null, undefined));
    const key = fc.constantFrom('inputTokens', 'outputTokens', 'costUsd', 'toolCalls', 'llmCalls', 'wallMs', 'other');
    const limits = fc.record(
      {
        maxCostUsd: fc.nat(100),
        maxTokens: fc.nat(100),
        maxToolCalls: fc.nat(5),
        maxLlmCalls: fc.nat(5),
        maxWallMs: fc.nat(100),
      },
      { requiredKeys: [] },
    );
    fc.assert(
      fc.property(limits, fc.array(fc.dictionary(key, value, { maxKeys: 4 }), { maxLength: 6 }), (max, deltas) => {
        const budget = new Budget(max);
        const reference = emptyUsage();
        for (const delta of deltas) {
          const bad = Object.keys(delta).find((k) => {
            const v = delta[k];
            return v !== undefined && !(typeof v === 'number' && Number.isFinite(v) && v >= 0);
          });
          if (bad === undefined) {
            budget.charge(delta as UsageDelta);
            Object.assign(reference, addUsage(reference, delta as UsageDelta));
          } else expect(() => budget.charge(delta as UsageDelta)).toThrow(`delta.${bad}`);
        }
        expect(budget.usage).toEqual(reference);
        expect(budget.spent()).toEqual(spentLimit(reference, max));
      }),
    );
  });
});
