import type { Budget } from '../money/Budget';
import type { UsageMeter } from '../money/UsageMeter';
import { OperationError } from '../TurnError';
import { budgetNote } from './budgetNote';

/**
 * The budget note a call carries under `budget.visible`, for the adapter and the mirror alike:
 * the meter's budgets and the figures of the external budgets that give theirs (one round trip
 * each, asked at once). Every answer is awaited (allSettled: none is left in flight, its
 * rejection unheard); one that failed fails the call by its budget's name, since a note without
 * its figures would tell the model of room that is not there. No await when no external budget
 * gives figures.
 */
export function budgetNoteOf(meter: UsageMeter): string | OperationError | Promise<string | OperationError> {
  const external = meter.external;
  if (!external.some((b) => b.figures !== undefined)) return budgetNote(meter.budgets);
  return Promise.allSettled(external.map((b) => b.figures?.())).then((settled) => {
    const figures: Array<Pick<Budget, 'limits' | 'usage'>> = [...meter.budgets];
    for (const [i, s] of settled.entries()) {
      if (s.status === 'rejected') return new OperationError(`externalBudgets[${i}].figures()`, s.reason);
      if (s.value !== undefined) figures.push(s.value);
    }
    return budgetNote(figures);
  });
}
