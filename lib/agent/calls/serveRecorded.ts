import { responseUsage } from '../../internal/fieldLists';
import type { LLMCallInput } from '../AgentEvents';
import type { LLMOperation, LLMOutcome } from '../turn/LLMOutcome';
import { splitUsage } from '../turn/checkAgentOutput';
import { OperationError } from '../TurnError';
import type { TurnScope } from '../turn/TurnScope';
import type { UsageDelta } from '../UsageTotals';
import type { LLMResponse } from '../AgentLoop';
import type { AttemptCharge } from '../money/chargeRule';
import type { PricedResponse } from '../money/priceResponse';
import type { RunRecording } from '../journal/RunRecording';
import type { UsageMeter } from '../money/UsageMeter';

/**
 * Serves an LLM call from the journal of the interrupted run this agent resumes: the recorded
 * response goes to the loop's `acceptRecorded` (no request is made), is charged to the agent's
 * own budget alone (shared and external budgets counted it from the files), and is journaled
 * again, marked `fromJournal`. Undefined when the call is to be made live: then the part of the
 * earlier spend that the served calls did not cover is charged, once. Served calls raise no
 * `llmAttempt` event: no attempt was made.
 */
export async function serveRecorded(
  scope: TurnScope,
  operation: LLMOperation,
  input: LLMCallInput,
): Promise<LLMOutcome | undefined> {
  const { settings: s, meter, turn } = scope;
  const recording = s.recording!;
  let taken: ReturnType<typeof recording.take>;
  try {
    taken = recording.take(operation, input);
  } catch (error) {
    // The tool policy (a function of the caller's) threw or answered something else.
    return { kind: 'failed', error: new OperationError('resumeTools', error), data: { operation } };
  }
  if (taken === undefined) {
    const rest = recording.remainder();
    if (rest !== undefined) meter.chargeOwn(rest);
    return undefined;
  }
  const { response, costUsd } = taken;
  const startedAt = s.clock();
  const accept = s.agent.acceptRecorded!;
  const settled = await scope.settle((ctx) => accept.call(s.agent, operation, input, response, ctx), 1);
  const endedAt = s.clock();
  if (settled.kind === 'abandoned' || (settled.kind === 'threw' && scope.signal.aborted))
    return { kind: 'aborted', data: { attempt: 1, failures: [], fromJournal: true } };
  if (settled.kind === 'threw')
    return {
      kind: 'failed',
      error: new OperationError('acceptRecorded', settled.error),
      data: { operation, fromJournal: true },
    };
  chargeServed(meter, recording, servedDelta(response, costUsd));
  s.journal?.({
    type: 'llm',
    turn,
    operation,
    attempt: 1,
    startedAt,
    endedAt,
    input,
    response,
    ...(costUsd === undefined ? {} : { costUsd }),
    fromJournal: true,
  });
  return { kind: 'response', response, attempts: 1, failures: [], notes: { fromJournal: true } };
}

/** What a response served from the journal counts: its usage, its recorded cost (else one call of unknown cost), one LLM call. */
export function servedDelta(response: LLMResponse, costUsd: number | undefined): UsageDelta {
  const { valid } = splitUsage(response.usage);
  const cost = costUsd ?? valid.costUsd;
  return cost === undefined
    ? { ...responseUsage(valid, undefined), llmCalls: 1, unpricedCalls: 1 }
    : { ...responseUsage(valid, cost), llmCalls: 1 };
}

/**
 * Charges what was served from the journal (a response, a served tool call) to the run's own
 * budget alone (shared and external budgets counted it from the files), and counts it as
 * served, so that the rest of the earlier spend is charged once, when the run goes live. No
 * `meter`: the earlier spend was charged whole already (a mirror's), so it is counted alone.
 */
export function chargeServed(meter: UsageMeter | undefined, recording: RunRecording, delta: UsageDelta): void {
  meter?.chargeOwn(delta);
  recording.served(delta);
}

/**
 * Charges a response served from the journal (`chargeServed`) and says what it cost as a live
 * one's price and charge read: its recorded cost (no request, so no hold).
 */
export function chargeServedResponse(
  meter: UsageMeter | undefined,
  recording: RunRecording,
  response: LLMResponse,
  costUsd: number | undefined,
): { priced: PricedResponse; charge: AttemptCharge } {
  chargeServed(meter, recording, servedDelta(response, costUsd));
  if (costUsd === undefined)
    return { priced: {}, charge: { kind: 'unknown', reason: 'served from the journal, which recorded no cost' } };
  return { priced: { costUsd }, charge: { kind: 'priced', costUsd } };
}
