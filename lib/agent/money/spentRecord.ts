import type { BoundExceeded } from '../boundExceeded';
import type { SpentLimit } from '../BudgetLimits';
import { BudgetExceededError } from '../TurnError';

/** The data a `budget_exceeded` record carries: the limit, its use and max, a strict cap's refused hold, and a passed bound. */
export function limitData(spent: SpentLimit): {
  limit: string;
  used: number;
  max: number;
  hold?: number;
  boundExceeded?: BoundExceeded;
} {
  const data: { limit: string; used: number; max: number; hold?: number; boundExceeded?: BoundExceeded } =
    spent.hold === undefined
      ? { limit: spent.limit, used: spent.used, max: spent.max }
      : { limit: spent.limit, used: spent.used, max: spent.max, hold: spent.hold };
  if (spent.boundExceeded !== undefined) data.boundExceeded = spent.boundExceeded;
  return data;
}

/** The error a run that a budget stopped ends with. */
export function budgetError(spent: SpentLimit): BudgetExceededError {
  return new BudgetExceededError(spent.message, spent.limit, spent.used, spent.max);
}
