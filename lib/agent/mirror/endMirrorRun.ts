import { State, type StateName } from '../../../states/StateName';
import { TOOL_PHASE, type MirrorMoves } from './MirrorMoves';
import { slotSummary } from './MirrorSlot';
import { abortReason } from '../turn/abortReason';
import type { TurnResult } from '../TurnResult';
import { TEXT_ONLY_END } from '../turn/turnEvents';
import { ExtensionState } from '../extensionStates';
import { TurnCancelledError } from '../TurnError';
import { InvalidArgumentError } from '../../machine/InvalidArgumentError';

/**
 * The framework's loop ended on its own (`StepMirror.runEnd`) from ProcessingLLMResponse or
 * the tool phase (not cancelled while its tools ran). After a text-only response the run ends
 * in EndOfTurn; after tools with no further model call (the loop's stop condition), in
 * BudgetExceeded when a budget is spent, else in EndOfTurn, forced with the reason.
 */
export function endMirrorRun(
  run: MirrorMoves,
  state: StateName,
  text: string | undefined,
  signal: AbortSignal,
): TurnResult {
  if (state === State.ProcessingLLMResponse) {
    if (signal.aborted) return run.resultOf(run.cancel(state));
    const chars = text?.length ?? 0;
    return run.resultOf(run.end(State.EndOfTurn, TEXT_ONLY_END, { chars }, 'end_of_turn', {}), text);
  }
  run.closeTools(state);
  const spent = run.meter!.spent();
  if (spent !== undefined) return run.overBudget(State.BudgetExceeded, spent);
  if (signal.aborted) return run.resultOf(run.cancel(State.CheckingBudget));
  return run.resultOf(
    run.end(
      State.EndOfTurn,
      "the framework's loop ended after its tools ran, with no further LLM call (its stop condition)",
      { chars: text?.length ?? 0 },
      'end_of_turn',
      {},
      { forced: true, logLevel: 'info' },
    ),
    text,
  );
}

/**
 * The framework's loop stopped for an abort (`StepMirror.runAborted`, the signal aborted): the run
 * ends as `cancelled` (or `budget_exceeded` at a deadline), its calls in flight interrupted.
 */
export function abortMirrorRun(run: MirrorMoves, signal: AbortSignal): TurnResult {
  const state = run.machine.pendingState;
  if (state === State.WaitingForUserInput) return run.cancelledBeforeStart();
  if (TOOL_PHASE.has(state)) run.answerRest(`interrupted: ${abortReason(signal)}`, 'interrupted');
  return run.resultOf(run.cancel(state, state === State.RunningTool ? { results: slotSummary(run.slots) } : {}));
}

/**
 * No answer to every call the run waits on within `timeoutMs` (`approvalTimeoutMs`): the run
 * ends in ApprovalTimedOut as `cancelled`, as the adapter's does, its unanswered calls not run.
 */
export function timeOutMirrorRun(run: MirrorMoves, timeoutMs: number, unanswered: readonly string[]): TurnResult {
  const reason = `no answer to the approval request within ${timeoutMs} ms`;
  run.answerRest(`not run: ${reason}`, 'not_run');
  const error = new TurnCancelledError(reason, ExtensionState.AwaitingApproval as unknown as StateName);
  return run.resultOf(
    run.end(ExtensionState.ApprovalTimedOut as unknown as StateName, reason, { timeoutMs, unanswered }, 'cancelled', {
      error,
    }),
  );
}

/** `approvalTimeoutMs` of a mirror: a non-negative number of milliseconds, and only with `approvals`. */
export function assertApprovalTimeout(timeoutMs: unknown, approvals: boolean): void {
  if (timeoutMs === undefined) return;
  if (!(typeof timeoutMs === 'number' && Number.isFinite(timeoutMs) && timeoutMs >= 0))
    throw new InvalidArgumentError('approvalTimeoutMs', 'a non-negative number of milliseconds', timeoutMs);
  if (!approvals)
    throw new InvalidArgumentError(
      'approvalTimeoutMs',
      'left out unless `approvals` is true (a mirror whose framework asks people to approve tool calls)',
      timeoutMs,
    );
}
