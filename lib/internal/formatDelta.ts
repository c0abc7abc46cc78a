import { formatDuration } from './formatDuration';
import { formatUsd } from './formatUsd';

/** How a figure is said: a count, dollars, or milliseconds. */
export type DeltaUnit = 'count' | 'usd' | 'ms';

const say = (n: number, unit: DeltaUnit): string =>
  unit === 'usd' ? formatUsd(n) : unit === 'ms' ? formatDuration(n) : n.toLocaleString('en-US');

/**
 * A figure before and after, and the change: `2 → 3 (+1)`, `$0.0300 → $0.0200 (-$0.0100)`,
 * `1.2 s → 1.5 s (+300 ms)`; `2 → 2` when it did not change.
 */
export function formatDelta(a: number, b: number, unit: DeltaUnit): string {
  const change = unit === 'usd' ? Math.round((b - a) * 1e10) / 1e10 : b - a;
  if (change === 0) return `${say(a, unit)} → ${say(b, unit)}`;
  const sign = change > 0 ? '+' : '-';
  const size = say(Math.abs(change), unit);
  return `${say(a, unit)} → ${say(b, unit)} (${sign}${size})`;
}

/** A change alone, signed: `+1`, `-$0.0100`, `+300 ms`; `0` for none. */
export function formatChange(change: number, unit: DeltaUnit): string {
  if (change === 0) return unit === 'usd' ? formatUsd(0) : '0';
  return `${change > 0 ? '+' : '-'}${say(Math.abs(change), unit)}`;
}
