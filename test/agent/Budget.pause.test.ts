import { Budget } from '../../lib/agent/money/Budget';

describe("Budget with whenSpent: 'pause'", () => {
  it('refuses a hold that does not fit with the raises so far, and takes it once raised', () => {
    const pool = new Budget({ maxCostUsd: 0.01 }, { whenSpent: 'pause' });
    expect(pool.hold(0.006)).toBeUndefined();
    expect(pool.paused).toBe(false);
    const refused = pool.hold(0.006);
    expect(refused).toMatchObject({ limit: 'maxCostUsd', hold: 0.006, raises: 0 });
    expect(pool.paused).toBe(true);
    pool.raise(0.02);
    expect(pool.paused).toBe(false);
    expect(pool.raises).toBe(1);
    expect(pool.limits.maxCostUsd).toBe(0.02);
    expect(pool.hold(0.006)).toBeUndefined();
  });

  it('never reports its cost cap spent (holds keep it); other limits still stop', () => {
    const pool = new Budget({ maxCostUsd: 0.01, maxLlmCalls: 2 }, { whenSpent: 'pause' });
    pool.charge({ costUsd: 0.01, llmCalls: 1 });
    expect(pool.spent()).toBeUndefined();
    pool.charge({ llmCalls: 1 });
    expect(pool.spent()?.limit).toBe('maxLlmCalls');
  });

  it('refuses a raise not above the cap, a raise of a budget that stops, and a pause without a strict cap, by name', () => {
    const pool = new Budget({ maxCostUsd: 0.01 }, { whenSpent: 'pause' });
    expect(() => pool.raise(0.01)).toThrow(
      /`maxCostUsd` to be a finite number of USD above the cap in force \(\$0\.0100\)/,
    );
    expect(() => pool.raise(Number.NaN)).toThrow(/`maxCostUsd`/);
    expect(() => new Budget({ maxCostUsd: 1 }).raise(2)).toThrow(
      /`raise\(\)` to be a budget made with whenSpent: 'pause'/,
    );
    expect(() => new Budget({ maxCostUsd: 1, strict: false }, { whenSpent: 'pause' })).toThrow(/`whenSpent`/);
    expect(() => new Budget({ maxCostUsd: 1 }, { whenSpent: 'wait' as 'pause' })).toThrow(
      "Expected `whenSpent` to be 'pause' or 'stop', got `wait` (string)",
    );
  });
});
