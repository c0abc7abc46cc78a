import type { SpentLimit } from '../BudgetLimits';

/**
 * The abort reason of work whose wall-time deadline passed (a turn's `maxWallMs`, a batch's
 * `total.maxWallMs`): it carries the spent limit, so that what was aborted ends as
 * `budget_exceeded` rather than `cancelled`.
 */
export class Deadline {
  constructor(readonly spent: SpentLimit) {}
}
