import { InvalidArgumentError } from 'agent-state-machine';
import { assertKnownOptions } from 'agent-state-machine/internal';
import { keysOn } from '../../internal/optionTable';
import { decideApproval, describeAnswer, readTakenAnswers, type ApprovalPlace, type Within } from './approvalRecords';
import { withBatchApprovals, type BatchPlaceOptions, type BatchWaitingCall } from './readBatchApprovals';

/** Options of `answerBatchApproval(options)`. */
export interface AnswerBatchApprovalOptions extends BatchPlaceOptions {
  /** The run: its task id. */
  run: string;
  /** The call to answer. Default: every call of the run's request not answered yet. */
  callId?: string;
  /** Approve (the tool runs) or deny (it does not; the LLM gets `denied: <reason>`). */
  approved: boolean;
  /** With `approved: false`: why. Default `denied by a person`. */
  reason?: string;
  /** Who answers, kept with the answer (`agent-sm approve` gives the user's login name). */
  by?: string;
}

const ANSWER_OPTION_KEYS = keysOn('answer');

/**
 * Answers one tool call a run of a BullMQ batch waits on (or every call of the run not answered
 * yet), from any process, through the same Redis records as `onApproval` of `submitBatch` and
 * `attachBatch` (what `agent-sm approve|deny --redis URL <batchId> <run>` runs). The run's worker
 * takes the answers once every call of its request has one, and the run goes on. Each answer is
 * taken once: an unknown run or call, a run that does not wait, a call answered already (here
 * or elsewhere, saying how, by whom and when) — refused by name. Resolves with the calls
 * answered and whether the run has every answer now.
 */
export async function answerBatchApproval(
  options: AnswerBatchApprovalOptions,
): Promise<{ calls: BatchWaitingCall[]; complete: boolean; name: string; prefix: string }> {
  if (typeof options !== 'object' || options === null)
    throw new InvalidArgumentError('options', 'an object { connection, batchId, run, approved, … }', options);
  assertKnownOptions(options, ANSWER_OPTION_KEYS, 'answerBatchApproval()');
  const { batchId, run, callId, approved, reason = 'denied by a person', by } = options;
  if (typeof run !== 'string' || run === '')
    throw new InvalidArgumentError('run', 'a task id (a non-empty string)', run);
  if (callId !== undefined && (typeof callId !== 'string' || callId === ''))
    throw new InvalidArgumentError('callId', 'a call id (a non-empty string)', callId);
  if (typeof approved !== 'boolean') throw new InvalidArgumentError('approved', 'true or false', approved);
  if (typeof reason !== 'string') throw new InvalidArgumentError('reason', 'a string', reason);
  if (by !== undefined && (typeof by !== 'string' || by === ''))
    throw new InvalidArgumentError('by', 'who answers (a non-empty string)', by);
  return withBatchApprovals(options, 'answerBatchApproval', async (batch) => {
    const index = batch.ids.indexOf(run);
    if (index < 0)
      throw new InvalidArgumentError('run', `the id of a run of batch ${batchId} (${listed(batch.ids)})`, run);
    const request = batch.open.find((r) => r.index === index);
    if (request === undefined) await refuseAnsweredAlready(batch, index, run, callId);
    if (request === undefined)
      throw new Error(
        `run ${run} of batch ${batchId} does not wait for approval (no request of it is open: ` +
          'it went on with its answers, ended, or has not parked); there is nothing to answer — ' +
          `see agent-sm approvals --redis URL ${batchId} for the calls that wait`,
      );
    let targets: BatchWaitingCall[];
    if (callId !== undefined) {
      const call = request.calls.find((c) => c.callId === callId);
      if (call === undefined)
        throw new InvalidArgumentError(
          'callId',
          `the id of a call run ${run} waits on (${listed(request.calls.map((c) => c.callId))})`,
          callId,
        );
      if (call.answer !== undefined)
        throw new Error(
          `call ${callId} of run ${run} was answered already (${describeAnswer(call.answer)}): an answer is taken once; ` +
            'the run goes on once every call of it has one',
        );
      targets = [call];
    } else {
      targets = request.calls.filter((c) => c.answer === undefined);
      if (targets.length === 0)
        throw new Error(
          `every call run ${run} waits on was answered already (${request.calls
            .map((c) => `${c.callId}: ${describeAnswer(c.answer!)}`)
            .join('; ')}): an answer is taken once; the run goes on with them`,
        );
    }
    let complete = false;
    const at = Date.now();
    for (const call of targets) {
      const decision = approved
        ? { callId: call.callId, approved: true as const }
        : { callId: call.callId, approved: false as const, reason };
      // Another process may answer between the read and here: the record refuses it then, by name.
      ({ complete } = await decideApproval(
        { ...batch, index, requestId: request.requestId, taskId: run },
        { ...decision, ...(by === undefined ? {} : { by }), at },
        batch.within,
      ));
    }
    return { calls: targets, complete, name: batch.name, prefix: batch.prefix };
  });
}

/**
 * When run `run` went on with the answers it took (to `callId`, or to any of its calls), refuses
 * the late answer saying how each was answered, as the store and the folder do.
 */
async function refuseAnsweredAlready(
  batch: Pick<ApprovalPlace, 'redis' | 'keys'> & { within: Within },
  index: number,
  run: string,
  callId: string | undefined,
): Promise<void> {
  const taken = await readTakenAnswers({ ...batch, index }, batch.within);
  if (callId !== undefined) {
    const answer = taken.get(callId);
    if (answer !== undefined)
      throw new Error(
        `call ${callId} of run ${run} was answered already (${describeAnswer(answer)}): the run has gone on with it; nothing waits for another answer`,
      );
    return;
  }
  if (taken.size > 0)
    throw new Error(
      `every call run ${run} waited on was answered already (${[...taken]
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
        .map(([id, answer]) => `${id}: ${describeAnswer(answer)}`)
        .join('; ')}): the run has gone on with them; nothing waits for another answer`,
    );
}

function listed(ids: readonly string[]): string {
  const shown = ids.slice(0, 10).join(', ');
  return ids.length > 10 ? `${shown}, …` : shown;
}
