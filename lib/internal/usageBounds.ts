import { describeValue } from './describeValue';

/**
 * The largest numbers usage may carry where it enters (a response's usage, a charge to a
 * budget, what `pricing` answers). Past them a number is a bug, not a bill: one `1e308` makes
 * every later sum `Infinity` and disables a cap for good. Stated, not tuned:
 * - one response reports at most 1e9 tokens of any kind (no model's context comes near);
 * - one response costs at most $10,000;
 * - one charge to a budget adds at most 1e12 tokens, $1e9, 1e9 calls or 1e13 ms (a whole
 *   batch's spend, carried over on resume, stays well inside).
 */
export const USAGE_BOUNDS = Object.freeze({
  responseTokens: 1e9,
  responseCostUsd: 1e4,
  chargeTokens: 1e12,
  chargeCostUsd: 1e9,
  chargeCalls: 1e9,
  chargeWallMs: 1e13,
});

/** Why `value` is not a usage amount of at most `max` (a non-negative finite number), or undefined when it is. */
export function badAmount(value: unknown, max: number): string | undefined {
  if (typeof value !== 'number' || Number.isNaN(value)) return `a number, got ${describeValue(value)}`;
  if (!Number.isFinite(value)) return `a finite number, got ${String(value)}`;
  if (value < 0) return `a non-negative number, got ${String(value)}`;
  if (value > max) return `at most ${max.toExponential()} (the stated bound), got ${String(value)}`;
  return undefined;
}

/** The most one charge may add to the usage field `key`. */
export function chargeBound(key: string): number {
  switch (key) {
    case 'costUsd':
      return USAGE_BOUNDS.chargeCostUsd;
    case 'llmCalls':
    case 'toolCalls':
      return USAGE_BOUNDS.chargeCalls;
    case 'wallMs':
      return USAGE_BOUNDS.chargeWallMs;
    default:
      return USAGE_BOUNDS.chargeTokens;
  }
}
