import { State } from '../../../states/StateName';
import { WRAPPING_UP } from '../extensionStates';
import type { TurnResult } from '../TurnResult';
import { TOOL_PHASE, type MirrorMoves } from './MirrorMoves';
import type { MirrorStop } from './MirrorStop';
import { mirrorEndedError } from './mirrorStopReason';

/**
 * The moves before a mirrored model attempt (`modelCallStart`, `modelCallPlan`): the run's
 * first call, the next after tools, or a retry (stays put). A run cancelled while its tools ran
 * ends there (the mirror's `runAborted`), as the adapter's does. With no run going, the call
 * starts the next run; a mirror of one run (a batch task's) refuses it with how its run ended,
 * so that the task's report is that run's, its spend included.
 */
export function enterMirrorCall(
  run: MirrorMoves,
  mirror: { runStart(): void; runAborted(): TurnResult },
): MirrorStop | undefined {
  if (!run.running && run.deps.singleRun && run.result !== undefined)
    return mirrorEndedError(run.result, run.turn, run.machine.current);
  if (!run.running) mirror.runStart();
  run.deps.recording?.stop('the framework made an LLM call live without asking for its recorded response');
  const state = run.machine.pendingState;
  if (state === State.WaitingForUserInput) return run.firstCall();
  if (run.deps.signal().aborted && TOOL_PHASE.has(state)) return mirror.runAborted().error as MirrorStop;
  // Another attempt of the same call (the final call's too): a retry, whether the failure was reported or not.
  if (state === State.SendingToLLM || state === State.SendingToolResults || state === WRAPPING_UP) return undefined;
  return run.toSendingResults(state);
}
