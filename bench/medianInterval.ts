// Where the median of what a sample was drawn from lies, from the sample alone: a verdict on a
// target is only as sure as this interval lets it be (bench/harness.ts `ratioTarget`).

/** The confidence the bench asks of a verdict: at least 90% that the median lies in the interval. */
const CONFIDENCE = 0.9;

/**
 * The interval [x(k), x(n+1−k)] of the sorted `values` that holds the median of the
 * distribution they were drawn from with probability at least `confidence`, whatever that
 * distribution is: the median lies below x(k) only when fewer than k values fall below it, a
 * binomial(n, ½) event. k is the largest rank with P(Bin(n, ½) ≤ k − 1) ≤ (1 − confidence) / 2;
 * too few values for any rank (4 or fewer at 90%) give the whole range, which holds it with less.
 */
export function medianInterval(values: readonly number[], confidence = CONFIDENCE): { low: number; high: number } {
  const n = values.length;
  if (n === 0) throw new RangeError('the median interval of no values');
  if (!(confidence > 0 && confidence < 1)) throw new RangeError(`confidence ${confidence}: expected between 0 and 1`);
  const sorted = [...values].sort((a, b) => a - b);
  const tail = (1 - confidence) / 2;
  // P(Bin(n, ½) ≤ j), term by term in logarithms: 2^−n underflows past n = 1074.
  let logTerm = -n * Math.LN2;
  let below = Math.exp(logTerm);
  let k = 0;
  for (let j = 0; below <= tail && j < n; j++) {
    // P(Bin ≤ j) is within the tail: rank j + 1 may bound the interval. Add the next term.
    k = j + 1;
    logTerm += Math.log((n - j) / (j + 1));
    below += Math.exp(logTerm);
  }
  // No rank within the tail (4 values or fewer) is rank 1: the whole range.
  const rank = Math.max(k, 1);
  return { low: sorted[rank - 1]!, high: sorted[n - rank]! };
}
