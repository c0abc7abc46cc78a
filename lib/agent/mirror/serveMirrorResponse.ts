import { State } from '../../../states/StateName';
import type { LLMResponse } from '../AgentLoop';
import { mirrorLlmLine } from './mirrorAttemptLine';
import type { MirrorMoves } from './MirrorMoves';
import { takeMirrorResponse } from './takeMirrorResponse';

/**
 * With `resumeFrom`, before a model call (`StepMirror.recordedResponse`): the journaled response
 * of this call, reported (no request, no hold, charged to the own budget alone); undefined:
 * make the call live.
 */
export function serveMirrorResponse(run: MirrorMoves): LLMResponse | undefined {
  const recording = run.deps.recording;
  if (recording?.serving !== true || !run.running || run.deps.signal().aborted) return undefined;
  const state = run.machine.pendingState;
  // Recorded moves passed their budget checks when they were made: none here, as the adapter's serving does.
  if (state === State.WaitingForUserInput) run.sendUserMessage();
  else if (state !== State.SendingToLLM && state !== State.SendingToolResults) run.toSendingResults(state, false);
  const taken = recording.take(run.operation, mirrorLlmLine(run.attemptFacts(), 0).input!);
  if (taken === undefined) return undefined;
  run.attempt = 1;
  run.attemptStartedAt = run.deps.clock();
  run.served = { costUsd: taken.costUsd };
  if (run.running) takeMirrorResponse(run, taken.response);
  return taken.response;
}
