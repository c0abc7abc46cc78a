import { State, type StateName } from '../../../states/StateName';
import { TOOL_PHASE, type MirrorMoves } from './MirrorMoves';
import { slotSummary } from './MirrorSlot';
import { abortReason } from '../turn/abortReason';
import type { TurnResult } from '../TurnResult';
import { TEXT_ONLY_END } from '../turn/turnEvents';

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
