import type { SpentLimit } from '../agent/BudgetLimits';
import { StateMachineError } from '../machine/StateMachineError';

/** Why a batch did not start a run. */
export type SkipReason = 'budget_exceeded' | 'aborted';

/**
 * A batch run that never started: the shared budget was spent or the batch's signal aborted
 * first. The message is the reason with its live numbers, e.g.
 * `the batch's total budget exceeded: $5.0200 of $5.0000 after 41 LLM calls`.
 */
export class RunSkippedError extends StateMachineError {
  readonly code = 'run_skipped' as const;

  constructor(
    readonly reason: SkipReason,
    message: string,
    /** The spent limit of the shared budget, for `budget_exceeded`. */
    readonly spent?: SpentLimit,
  ) {
    super(message);
  }
}
