import fc from 'fast-check';
import { assertBudgetLimits, checkedSpentLimit, spentLimit, type BudgetLimits } from '../../lib/agent/BudgetLimits';
import { addUsage, addUsageTo, emptyUsage, type UsageTotals } from '../../lib/agent/UsageTotals';

const usage = (u: Partial<UsageTotals>): UsageTotals => ({ ...emptyUsage(), ...u });

describe('spentLimit()', () => {
  it('is undefined while every limit has room, and without limits', () => {
    expect(spentLimit(usage({ costUsd: 0.49 }), { maxCostUsd: 0.5 })).toBeUndefined();
    expect(spentLimit(usage({ costUsd: 99 }), undefined)).toBeUndefined();
    expect(spentLimit(usage({ costUsd: 99 }), {})).toBeUndefined();
  });

  it('counts a limit as spent when usage reaches it', () => {
    expect(spentLimit(usage({ llmCalls: 3 }), { maxLlmCalls: 3 })).toEqual({
      limit: 'maxLlmCalls',
      used: 3,
      max: 3,
      message: 'budget exceeded: 3 of 3 LLM calls',
    });
  });

  it('names the numbers, dollars rounded as every amount is (formatUsd)', () => {
    expect(spentLimit(usage({ costUsd: 0.62, llmCalls: 2 }), { maxCostUsd: 0.5 })!.message).toBe(
      'budget exceeded: $0.6200 of $0.5000 after 2 LLM calls',
    );
    expect(spentLimit(usage({ costUsd: 0.101, llmCalls: 10 }), { maxCostUsd: 0.1 })!.message).toBe(
      'budget exceeded: $0.1010 of $0.1000 after 10 LLM calls',
    );
    expect(
      spentLimit(usage({ inputTokens: 7000, outputTokens: 5345, llmCalls: 1 }), { maxTokens: 10_000 }, 'shared budget')!
        .message,
    ).toBe('shared budget exceeded: 12,345 tokens of 10,000 tokens after 1 LLM call');
    expect(spentLimit(usage({ toolCalls: 1 }), { maxToolCalls: 1 })!.message).toBe(
      'budget exceeded: 1 tool call of 1 tool call after 0 LLM calls',
    );
    expect(spentLimit(usage({ wallMs: 61_000 }), { maxWallMs: 60_000 })!.message).toBe(
      'budget exceeded: 1 minute 1 second of wall time, of 1 minute after 0 LLM calls',
    );
  });

  it('reports the first spent limit in a fixed order', () => {
    expect(spentLimit(usage({ costUsd: 5, toolCalls: 9 }), { maxToolCalls: 1, maxCostUsd: 1 })!.limit).toBe(
      'maxCostUsd',
    );
  });
});

describe('assertBudgetLimits()', () => {
  it('accepts undefined, empty and valid limits', () => {
    expect(() => assertBudgetLimits(undefined, 'budget')).not.toThrow();
    expect(() => assertBudgetLimits({}, 'budget')).not.toThrow();
    expect(() => assertBudgetLimits({ maxCostUsd: 0, maxTokens: 10, maxWallMs: undefined }, 'budget')).not.toThrow();
  });

  it.each([
    [
      [],
      'Expected `total` to be an object with any of maxCostUsd, maxTokens, maxToolCalls, maxLlmCalls, maxWallMs, got `[]` (array)',
    ],
    [{ maxCostUsd: -0.01 }, 'Expected `total.maxCostUsd` to be a non-negative finite number, got `-0.01` (number)'],
    [{ maxTokens: Infinity }, 'Expected `total.maxTokens` to be a non-negative finite number, got `Infinity` (number)'],
    [
      { maxDollars: 5 },
      'Expected `total.maxDollars` to be one of the limits maxCostUsd, maxTokens, maxToolCalls, maxLlmCalls, maxWallMs (unknown key), got `5` (number)',
    ],
  ])('names the bad value %p', (limits, message) => {
    expect(() => assertBudgetLimits(limits, 'total')).toThrow(message);
  });
});

describe('spentLimit() with odd values', () => {
  it('names a null usage or null limits instead of throwing a TypeError', () => {
    expect(() => spentLimit(null as never, { maxCostUsd: 1 })).toThrow('Expected `usage` to be usage totals');
    expect(() =>
      spentLimit(
        {
          costUsd: 0,
          inputTokens: 0,
          outputTokens: 0,
          toolCalls: 0,
          llmCalls: 0,
          wallMs: 0,
          uncertainUsd: 0,
          releasedUsd: 0,
          unpricedCalls: 0,
        },
        null as never,
      ),
    ).toThrow(/`limits`/);
  });
});

describe('checkedSpentLimit()', () => {
  it('answers as spentLimit() on limits that pass assertBudgetLimits (property-based)', () => {
    const n = fc.oneof(fc.nat(1000), fc.double({ min: 0, max: 1000, noNaN: true }));
    const usageArb = fc.record({
      inputTokens: n,
      outputTokens: n,
      costUsd: n,
      toolCalls: n,
      llmCalls: n,
      wallMs: n,
      uncertainUsd: n,
      releasedUsd: n,
      unpricedCalls: n,
    });
    const limitsArb = fc.record(
      { maxCostUsd: n, maxTokens: n, maxToolCalls: n, maxLlmCalls: n, maxWallMs: n },
      { requiredKeys: [] },
    );
    fc.assert(
      fc.property(usageArb, limitsArb, fc.constantFrom('budget', 'shared budget'), (u, limits: BudgetLimits, label) => {
        assertBudgetLimits(limits, 'limits');
        expect(checkedSpentLimit(u, limits, label)).toEqual(spentLimit(u, limits, label));
      }),
    );
  });
});

describe('addUsageTo()', () => {
  it('adds in place what addUsage() returns (property-based)', () => {
    const n = fc.option(
      fc.oneof(
        fc.nat(1000),
        fc.integer({ min: 0, max: 300 }).map((c) => c / 100),
      ),
      { nil: undefined },
    );
    const deltaArb = fc.record(
      {
        inputTokens: n,
        outputTokens: n,
        costUsd: n,
        toolCalls: n,
        llmCalls: n,
        wallMs: n,
        uncertainUsd: n,
        releasedUsd: n,
      },
      { requiredKeys: [] },
    );
    fc.assert(
      fc.property(fc.array(deltaArb, { maxLength: 12 }), (deltas) => {
        const inPlace = emptyUsage();
        let copied = emptyUsage();
        for (const delta of deltas) {
          addUsageTo(inPlace, delta);
          copied = addUsage(copied, delta);
        }
        expect(inPlace).toEqual(copied);
      }),
    );
  });
});
