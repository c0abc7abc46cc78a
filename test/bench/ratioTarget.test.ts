import { ratioFigure, ratioTarget, verdict } from '../../bench/harness';

describe('ratioTarget', () => {
  const goal = 1.5;
  const verdictOf = (ratios: number[], atLeast = false): string =>
    verdict(ratioTarget('t', ratioFigure(ratios), goal, 'floor', atLeast));

  it('passes a count exactly at the target: no spread, on the passing side', () => {
    expect(verdictOf([1.5, 1.5, 1.5])).toBe('PASS');
    expect(verdictOf([1.5, 1.5, 1.5], true)).toBe('PASS');
  });

  it('is UNSETTLED when the median’s interval holds the goal, and says the interval', () => {
    const t = ratioTarget('t', ratioFigure([1.1, 1.2, 1.3, 1.4, 1.45, 1.55, 1.6, 1.7, 1.8, 1.9, 2.0]), goal, 'floor');
    expect(verdict(t)).toBe('UNSETTLED');
    expect(t.measured).toContain("the median's 90% interval, 1.30× – 1.80×, holds the target");
  });

  it('decides when the interval is clear of the goal, either way', () => {
    const low = [1.1, 1.2, 1.25, 1.3, 1.3, 1.32, 1.35, 1.4, 1.45, 1.6, 2.5];
    expect(verdictOf(low)).toBe('PASS');
    expect(verdictOf(low, true)).toBe('MISS');
    const high = low.map((r) => r + 0.5);
    expect(verdictOf(high)).toBe('MISS');
    expect(verdictOf(high, true)).toBe('PASS');
  });

  it('is UNSETTLED when an end of the interval is the goal and the other is on the failing side', () => {
    // 11 pairs: the interval is the 3rd and the 9th.
    const from = (low: number, high: number): number[] => [1, 1, low, low, low, low, high, high, high, 3, 3];
    expect(verdictOf(from(1.5, 1.8))).toBe('UNSETTLED');
    expect(verdictOf(from(1.2, 1.5))).toBe('PASS');
    expect(verdictOf(from(1.2, 1.5), true)).toBe('UNSETTLED');
    expect(verdictOf(from(1.5, 1.8), true)).toBe('PASS');
  });
});
