import { failureMessage } from '../internal/failureMessage';
import { messageOf } from '../internal/messageOf';
import { StateMachineError } from '../machine/StateMachineError';
import type { BudgetLimitName } from './BudgetLimits';
import type { StallFinding } from './StallFinding';

/** Why a turn did not end normally; `TurnResult.error` holds one of these. */
export type TurnError =
  | LLMCallError
  | ContractViolationError
  | BudgetExceededError
  | TurnCancelledError
  | OperationError
  | MachineMovedError
  | StalledError;

/** The LLM call failed on every attempt; `cause` is the last failure, `attempts` all of them. */
export class LLMCallError extends StateMachineError {
  readonly code = 'llm_call_failed' as const;
  constructor(
    readonly operation: 'sendUserMessage' | 'sendToolResults',
    readonly attempts: ReadonlyArray<{ attempt: number; error: string; delayMs?: number }>,
    cause: unknown,
  ) {
    super(
      `${operation} failed after ${attempts.length} attempt${attempts.length === 1 ? '' : 's'}: ${failureMessage(cause)}`,
      { cause },
    );
  }
}

/** An operation returned something that breaks the AgentLoop contract. */
export class ContractViolationError extends StateMachineError {
  readonly code = 'contract_violation' as const;
  constructor(
    readonly operation: string,
    readonly problem: string,
    readonly value: unknown,
  ) {
    super(`${operation} broke its contract: ${problem}`);
  }
}

/** A budget limit was reached. */
export class BudgetExceededError extends StateMachineError {
  readonly code = 'budget_exceeded' as const;
  constructor(
    message: string,
    readonly limit: BudgetLimitName,
    readonly used: number,
    readonly max: number,
  ) {
    super(message);
  }
}

/** The turn was cancelled by `cancel()` or the caller's signal. */
export class TurnCancelledError extends StateMachineError {
  readonly code = 'cancelled' as const;
  constructor(
    readonly reason: string,
    /** The state the turn was in when it stopped. */
    readonly during: string,
  ) {
    super(`cancelled during ${during}: ${reason}`);
  }
}

/** An optional operation (gathering messages) threw; the turn ended in Error. */
export class OperationError extends StateMachineError {
  readonly code = 'operation_failed' as const;
  constructor(
    readonly operation: string,
    cause: unknown,
  ) {
    super(`${operation} failed: ${messageOf(cause)}`, { cause });
  }
}

/** Something other than the adapter moved its machine during a turn; the turn stopped there. */
export class MachineMovedError extends StateMachineError {
  readonly code = 'machine_moved' as const;
  constructor(
    readonly expected: string,
    readonly found: string,
    readonly turn: number,
  ) {
    super(
      `the machine was moved outside the adapter during turn ${turn}: expected ${expected}, found ${found} (move it between turns, not during one)`,
    );
  }
}

/** A stall detector fired and the `stall` policy stopped the run; `finding` says which detector, and what repeated. */
export class StalledError extends StateMachineError {
  readonly code = 'stalled' as const;
  constructor(readonly finding: StallFinding) {
    super(`stalled (${finding.detector}): the agent ${finding.reason}`);
  }
}
