import type { BudgetExceededError, OperationError, StalledError, TurnCancelledError } from '../TurnError';

/** Why the mirror refuses a call: the run must stop. The framework's hook throws it (or stops its loop). */
export type MirrorStop = BudgetExceededError | TurnCancelledError | OperationError | StalledError;
