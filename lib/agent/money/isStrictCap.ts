import type { BudgetLimits } from '../BudgetLimits';

/**
 * Whether limits make a strict dollar cap: `maxCostUsd` is set and `strict` is not `false`.
 * Caps are strict by default: a cap is never crossed unless `strict: false` accepts an
 * overshoot of at most one LLM response per run in flight.
 */
export function isStrictCap(limits: Pick<BudgetLimits, 'maxCostUsd' | 'strict'> | undefined): boolean {
  return limits !== undefined && limits.maxCostUsd !== undefined && limits.strict !== false;
}
