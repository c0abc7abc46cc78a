import { responseUsage } from '../internal/fieldLists';
import type { LLMCallInput } from './AgentEvents';
import type { LLMOperation, LLMOutcome } from './LLMOutcome';
import { splitUsage } from './checkAgentOutput';
import { OperationError } from './TurnError';
import type { TurnScope } from './TurnScope';
import type { UsageDelta } from './UsageTotals';

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
    return { kind: 'failed', error: new OperationError('resumeFrom.tools', error), data: { operation } };
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
  const { valid } = splitUsage(response.usage);
  const delta: UsageDelta = { ...responseUsage(valid, costUsd ?? valid.costUsd), llmCalls: 1 };
  meter.chargeOwn(delta);
  recording.served(delta);
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
