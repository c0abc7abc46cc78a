import { limitUsed, LIMIT_NAMES } from '../../internal/fieldLists';
import { LIMITS } from '../../internal/limits';
import type { Budget } from '../money/Budget';

/**
 * Pure: the note `budget.visible` adds to each LLM call, what is left of every limit set (the
 * least left where several budgets set one): `Budget left: $0.0350 of $0.0500 cost, 7 of 10 LLM
 * calls.` What was spent counts, not what is held (the final call's hold among it). Short, so
 * that its tokens cost little.
 */
export function budgetNote(budgets: readonly Pick<Budget, 'limits' | 'usage'>[]): string {
  const parts: string[] = [];
  for (const limit of LIMIT_NAMES) {
    let left = Infinity;
    let max = 0;
    for (const b of budgets) {
      const cap = b.limits[limit];
      if (cap === undefined) continue;
      const usage = b.usage;
      const rest = cap - limitUsed(usage, limit);
      if (rest < left) {
        left = rest;
        max = cap;
      }
    }
    if (left === Infinity) continue;
    const spec = LIMITS[limit];
    parts.push(`${spec.cell(Math.max(0, left))} of ${spec.cell(max)} ${spec.label}`);
  }
  return parts.length === 0 ? 'Budget left: no limit is set.' : `Budget left: ${parts.join(', ')}.`;
}
