import { State } from '../../../states/StateName';
import { InvalidArgumentError } from '../../machine/InvalidArgumentError';
import type { LLMResponse } from '../AgentLoop';
import { mirrorLlmLine } from './mirrorAttemptLine';
import type { MirrorMoves } from './MirrorMoves';
import { takeMirrorResponse } from './takeMirrorResponse';

/**
 * With `resumeFrom`, before a model call (`StepMirror.recordedResponse`): the journaled response
 * of this call, reported (no request, no hold, charged to the own budget alone); undefined:
 * make the call live. With `again`, a call the framework makes again as it was: see
 * `repeatedMirrorResponse`.
 */
export function serveMirrorResponse(run: MirrorMoves, again?: number): LLMResponse | undefined {
  if (again !== undefined) return repeatedMirrorResponse(run, again);
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

/**
 * The running run's model call number `again` (1 for its first), which the framework makes
 * again as it was (a LangGraph node re-run from its start when its graph resumes after an
 * `interrupt()`): the response its `llm` journal line holds, live or served from `resumeFrom`.
 * Nothing is reported (no request, no charge, no move, no new line: the call was answered
 * once). Undefined when the run is not running or has no such call: make the call live.
 */
function repeatedMirrorResponse(run: MirrorMoves, again: number): LLMResponse | undefined {
  if (!Number.isSafeInteger(again) || again < 1)
    throw new InvalidArgumentError(
      'again',
      "the number of a model call of the running run (1 for its first, up to the mirror's callsAnswered)",
      again,
    );
  if (!run.running || run.deps.signal().aborted) return undefined;
  return run.responses[again - 1];
}
