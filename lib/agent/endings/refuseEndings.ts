import { InvalidArgumentError } from '../../machine/InvalidArgumentError';
import type { LoopHonours } from '../AgentLoop';
import type { Budget } from '../money/Budget';
import type { ExternalBudget } from '../money/ExternalBudget';

/** The flag a loop (or a mirror's integration) must honour for each ending key of a budget. */
const FLAG = Object.freeze({ wrapUp: 'wrapUp', visible: 'budgetNote' } as const);

/**
 * Refuses, by name, a `wrapUp` or `visible` that a path cannot honour (`cannot` gives why, under
 * `budget.wrapUp` and `budget.visible`), in any of `budgets`: the path would otherwise run
 * without it, and a run meant to end with an answer would end without one. `honours`: the
 * flags the path does honour (a mirror's integration that makes the final call), let through.
 */
export function refuseEndings(
  budgets: readonly Pick<Budget, 'limits' | 'label'>[],
  cannot: Readonly<Record<string, string>>,
  where: string,
  honours: LoopHonours = {},
): void {
  for (const { limits, label } of budgets)
    for (const key of ['wrapUp', 'visible'] as const) {
      const value = limits[key];
      if (value === undefined || value === false || honours[FLAG[key]] === true) continue;
      throw new InvalidArgumentError(`${label}.${key}`, `left out of ${where}: ${cannot[`budget.${key}`]}`, value);
    }
}

/** The `endings` of budgets outside the process, as `refuseEndings` takes budgets (named by their `label`). */
export function outsideEndings(external: readonly ExternalBudget[]): Pick<Budget, 'limits' | 'label'>[] {
  return external.flatMap((b, i) =>
    b.endings === undefined ? [] : [{ limits: b.endings, label: b.label ?? `externalBudgets[${i}].endings` }],
  );
}
