import { State, type StateName } from '../../../states/StateName';
import { InvalidArgumentError } from '../../machine/InvalidArgumentError';
import { safeLog } from '../AgentLogger';
import type { LLMResponse } from '../AgentLoop';
import { afterChargeOn } from '../calls/afterCharge';
import { chargeResponse, type ChargedResponse } from '../calls/chargeResponse';
import { chargeServedResponse } from '../calls/serveRecorded';
import { splitUsage } from '../turn/checkAgentOutput';
import { chargeFields } from '../calls/endAttempt';
import { WRAPPING_UP } from '../extensionStates';
import type { MirrorMoves } from './MirrorMoves';
import { wrappedUp } from './MirrorWrapUp';
import { ONE_LLM_CALL } from '../UsageTotals';

/**
 * A model attempt of the running run answered (`StepMirror.modelResponse`): its usage is
 * charged, priced and journaled, and the machine moves on. A response no call was reported
 * before is the framework's order: the moves to a sending state are forced, with the reason.
 */
export function takeMirrorResponse(run: MirrorMoves, response: LLMResponse): void {
  if (typeof response !== 'object' || response === null)
    throw new InvalidArgumentError(
      'response',
      'an object { text?, toolCalls?, usage?, model?, finishReason? }',
      response,
    );
  const meter = run.meter!;
  const endedAt = run.deps.clock();
  let state = run.machine.pendingState;
  if (state !== State.SendingToLLM && state !== State.SendingToolResults && state !== WRAPPING_UP) {
    // A response without a call reported before it: the framework's order, forced with the reason.
    if (state === State.WaitingForUserInput) run.move(State.SendingToLLM, 'sending the user message');
    else run.toSendingResults(state, false);
    state = run.machine.pendingState;
    if (state !== State.SendingToLLM && state !== State.SendingToolResults) return;
    meter.charge(ONE_LLM_CALL, false);
    run.attempt = Math.max(1, run.attempt);
    run.attemptStartedAt = endedAt;
  }
  const toCharge = run.takeHold();
  const served = run.served;
  run.served = undefined;
  // A served response (from the journal) at its recorded cost: no request was made, so nothing to decide, as on the adapter.
  if (served !== undefined) {
    const { valid, problems, charge } = chargeServed(run, response, served.costUsd);
    run.attemptLine(endedAt, { response, usage: valid, ...chargeFields(charge), fromJournal: true });
    run.responses.push(response);
    return void goOn(run, state, response, problems, undefined);
  }
  // A live response against its hold, as the adapter's are.
  const charged = chargeResponse({ ...toCharge, value: response });
  const { valid, charge, passed } = charged;
  run.attemptLine(endedAt, {
    response,
    usage: valid,
    ...chargeFields(charge),
    ...(passed && { boundExceeded: passed }),
  });
  run.responses.push(response);
  // The decision the adapter makes too; a framework's response is the framework's, so no contract of ours to check.
  const next = afterChargeOn(meter, charged, run.operation, response, undefined, run.warnedUnknownCost);
  switch (next.kind) {
    case 'trip':
      return void run.trip(next.passed);
    case 'failed':
      return void run.failed(next.error, next.data);
    case 'response':
      if (next.warn !== undefined) {
        run.warnedUnknownCost = true;
        safeLog(run.deps.logger, 'warn', next.warn, { turn: run.turn });
      }
      return void goOn(run, state, response, next.notes?.usageProblems ?? [], next.notes?.unknownCost);
  }
}

/** A response the run goes on with: the final answer of a wrap-up, or one whose tool calls the run waits for. */
function goOn(
  run: MirrorMoves,
  state: StateName,
  response: LLMResponse,
  problems: readonly string[],
  unknownCost: string | undefined,
): void {
  if (state === WRAPPING_UP) return void wrappedUp(run, response, problems, unknownCost);
  run.responded(response, problems, unknownCost);
}

/**
 * A response served from the journal (`resumeFrom`): at its recorded cost, charged to the own
 * budget alone when `chargesServed`. It was made under the earlier attempt's hold, not this
 * one's: no bound to check.
 */
function chargeServed(run: MirrorMoves, response: LLMResponse, costUsd: number | undefined): ChargedResponse {
  const { valid, problems } = splitUsage(response.usage);
  const { chargesServed, recording } = run.deps;
  const { priced, charge } = chargeServedResponse(chargesServed ? run.meter : undefined, recording!, response, costUsd);
  return { valid, problems, priced, charge, costUsd, passed: undefined };
}
