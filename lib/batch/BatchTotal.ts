import type { BudgetLimits } from '../agent/BudgetLimits';

/**
 * The limits of a whole batch: `BudgetLimits`, and what its dollar cap does when a call does not
 * fit. `whenSpent: 'stop'` (the default): runs end `budget_exceeded` and tasks not started are
 * skipped. `'pause'` (a strict `maxCostUsd` only): a run whose call does not fit parks, holding
 * no slot, with its journal complete, and tasks not started wait, until the cap is raised
 * (`onPause`'s `raise`, or `agent-sm raise <folder> --total-usd N`); then they go on.
 */
export type BatchTotal = BudgetLimits & { whenSpent?: 'pause' | 'stop' };
