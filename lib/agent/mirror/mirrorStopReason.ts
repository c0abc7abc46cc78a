import type { StateName } from '../../../states/StateName';
import { abortReason } from '../turn/abortReason';
import { Deadline } from '../money/Deadline';
import { budgetError } from '../money/spentRecord';
import { BudgetExceededError, OperationError, StalledError, TurnCancelledError } from '../TurnError';
import type { TurnResult } from '../TurnResult';
import type { MirrorStop } from './MirrorStop';

/** The error a refused call gets once the signal aborted: a passed deadline is a spent budget, else a cancellation. */
export function mirrorCancelError(signal: AbortSignal, state: StateName): MirrorStop {
  const deadline: unknown = signal.reason;
  if (deadline instanceof Deadline) return budgetError(deadline.spent);
  return new TurnCancelledError(abortReason(signal), state);
}

/** The error a call gets after its run ended: the run's own stop, else a cancellation naming how it ended. */
export function mirrorEndedError(result: TurnResult | undefined, turn: number, state: StateName): MirrorStop {
  const error = result?.error;
  if (error instanceof BudgetExceededError || error instanceof TurnCancelledError || error instanceof OperationError)
    return error;
  if (error instanceof StalledError) return error;
  return new TurnCancelledError(`run ${turn} has ended (${result?.outcome ?? 'not started'})`, state);
}
