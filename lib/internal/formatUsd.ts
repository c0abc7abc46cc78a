/**
 * An amount of US dollars as every message, summary and report says it: four decimals
 * (`$0.0834`), two from $100 (`$123.45`), and six for an amount too small for four to show
 * (`$0.000015`). One rounding everywhere, so that a run's reason, the batch's summary and its
 * report give the same figure for the same amount.
 */
export function formatUsd(usd: number): string {
  const size = Math.abs(usd);
  const digits = size >= 100 ? 2 : size !== 0 && size < 0.00005 ? 6 : 4;
  return `$${usd.toFixed(digits)}`;
}
