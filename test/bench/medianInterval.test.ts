import fc from 'fast-check';
import { median } from '../../bench/harness';
import { medianInterval } from '../../bench/medianInterval';
import { seeded } from '../helpers/seeded';

describe('medianInterval', () => {
  it('gives the 3rd and 9th of 11 values at 90% (P(Bin(11, ½) ≤ 2) = 3.3%, ≤ 3 is 11.3%)', () => {
    expect(medianInterval([9, 2, 11, 5, 1, 7, 3, 10, 4, 8, 6])).toEqual({ low: 3, high: 9 });
  });

  it('gives the 7th and 15th of 21 values, the 11th and 21st of 31', () => {
    const ranks = (n: number): { low: number; high: number } =>
      medianInterval(Array.from({ length: n }, (_, i) => n - i));
    expect(ranks(21)).toEqual({ low: 7, high: 15 });
    expect(ranks(31)).toEqual({ low: 11, high: 21 });
  });

  it('gives the whole range up to 7 values (P(Bin(7, ½) ≤ 1) = 6.25% > 5%)', () => {
    for (const n of [5, 6, 7])
      expect(medianInterval(Array.from({ length: n }, (_, i) => i + 1))).toEqual({ low: 1, high: n });
    expect(medianInterval([1, 2, 3, 4, 5, 6, 7, 8])).toEqual({ low: 2, high: 7 });
  });

  it('gives the whole range when there are too few values for any rank (4 at 90%)', () => {
    expect(medianInterval([4, 1, 3, 2])).toEqual({ low: 1, high: 4 });
    expect(medianInterval([7])).toEqual({ low: 7, high: 7 });
  });

  it('narrows as the values grow in number, without underflow past 1,074 values', () => {
    const draw = seeded(7);
    const values = Array.from({ length: 5000 }, draw);
    const { low, high } = medianInterval(values);
    expect(low).toBeGreaterThan(0.47);
    expect(high).toBeLessThan(0.53);
    expect(low).toBeLessThan(high);
  });

  it('holds the median it was drawn from at least 90% of the time (2,000 seeded draws of 11 uniform values)', () => {
    const draw = seeded(42);
    let held = 0;
    const trials = 2000;
    for (let t = 0; t < trials; t++) {
      const { low, high } = medianInterval(Array.from({ length: 11 }, draw));
      if (low <= 0.5 && 0.5 <= high) held++;
    }
    // Its exact coverage is 93.5%: 1 − 2 · P(Bin(11, ½) ≤ 2).
    expect(held / trials).toBeGreaterThan(0.91);
    expect(held / trials).toBeLessThan(0.96);
  });

  it('brackets the sample median with two of the values', () => {
    fc.assert(
      fc.property(fc.array(fc.double({ noNaN: true, min: -1e6, max: 1e6 }), { minLength: 1, maxLength: 300 }), (v) => {
        const { low, high } = medianInterval(v);
        expect(v).toContain(low);
        expect(v).toContain(high);
        expect(low).toBeLessThanOrEqual(median(v));
        expect(median(v)).toBeLessThanOrEqual(high);
      }),
    );
  });

  it('refuses no values and a confidence outside (0, 1), naming them', () => {
    expect(() => medianInterval([])).toThrow('the median interval of no values');
    expect(() => medianInterval([1, 2], 1)).toThrow('confidence 1: expected between 0 and 1');
  });
});
