import fc from 'fast-check';
import { retryDelay } from '../../lib/agent/retry/retryDelay';

describe('retryDelay()', () => {
  it('doubles per attempt, keeping half and randomizing half', () => {
    expect([1, 2, 3, 4].map((a) => retryDelay(a, 100, 30_000, () => 0))).toEqual([50, 100, 200, 400]);
    expect([1, 2, 3, 4].map((a) => retryDelay(a, 100, 30_000, () => 0.999999))).toEqual([100, 200, 400, 800]);
  });

  it('stays within [exp/2, exp] and under the cap (property)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 40 }),
        fc.integer({ min: 0, max: 10_000 }),
        fc.integer({ min: 0, max: 60_000 }),
        fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
        (attempt, base, cap, r) => {
          const exp = Math.min(cap, base * 2 ** (attempt - 1));
          const delay = retryDelay(attempt, base, cap, () => r);
          expect(delay).toBeGreaterThanOrEqual(Math.floor(exp / 2));
          expect(delay).toBeLessThanOrEqual(Math.ceil(exp));
        },
      ),
    );
  });
});
