import type { SpentLimit } from './BudgetLimits';
import { BudgetExceededError } from './TurnError';

/** The data a `budget_exceeded` record carries: the limit, its use and max, and a strict cap's refused hold. */
export function limitData(spent: SpentLimit): { limit: string; used: number; max: number; hold?: number } {
  return spent.hold === undefined
    ? { limit: spent.limit, used: spent.used, max: spent.max }
    : { limit: spent.limit, used: spent.used, max: spent.max, hold: spent.hold };
}

/** The error a run that a budget stopped ends with. */
export function budgetError(spent: SpentLimit): BudgetExceededError {
  return new BudgetExceededError(spent.message, spent.limit, spent.used, spent.max);
}
