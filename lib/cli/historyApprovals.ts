import { AnsweredAlreadyError } from '../batch/keeping/approvalAnswers';
import type { AnswerBox } from '../batch/approvals/AnswerBox';
import type { WaitingApprovals, WaitingCall } from '../batch/approvals/waitingApprovals';
import { escapeControl } from '../internal/escapeControl';
import { InvalidArgumentError } from '../machine/InvalidArgumentError';
import type { AnswerAsked, ApprovalsPlace, GivenAnswers } from './ApprovalsPlace';
import { listed } from './listedIds';

/** How a batch whose runs' histories the CLI reads (a folder's, a store's) is named, and where its approvals are. */
export interface HistoryBatch {
  /** `in <folder>`, `in <store> batch <id>`. */
  where: string;
  /** `the batch in <folder>`. */
  batch: string;
  /** The command that lists what waits there (`agent-sm approvals <folder>`). */
  listHint: string;
  answerHint: string;
  /** What names the batch in the JSON. */
  names: Record<string, unknown>;
  /** What waits, read from the runs' histories and `box`. */
  read: () => Promise<WaitingApprovals>;
  box: AnswerBox;
}

/**
 * The approvals of a batch whose runs' histories say what they wait on (a folder batch's, a
 * store batch's): the calls of each run whose history ends in AwaitingApproval and that its
 * journal holds no answer to, answered through the batch's answers (`AnswerBox`), which the
 * running batch takes within a poll, a batch resumed later when the run waits again.
 */
export function historyApprovals(batch: HistoryBatch, clock: () => number): ApprovalsPlace {
  return {
    where: batch.where,
    batch: batch.batch,
    answerHint: batch.answerHint,
    list: async () => {
      const found = await batch.read();
      return {
        running: found.running,
        problems: found.problems,
        names: batch.names,
        calls: found.calls.map((c) => ({
          run: c.run,
          callId: c.callId,
          tool: c.tool,
          ...('input' in c ? { input: c.input } : {}),
          since: c.since,
          ...(c.answer === undefined
            ? {}
            : {
                answer: {
                  approved: c.answer.approved,
                  ...(c.answer.reason === undefined ? {} : { reason: c.answer.reason }),
                  ...(c.answer.by === undefined ? {} : { by: c.answer.by }),
                  at: c.answer.at,
                  taken: c.answer.taken,
                },
              }),
        })),
      };
    },
    answer: (asked) => answer(batch, asked, clock),
  };
}

/** Writes the answer to `callId` of `run` (or to each of its calls not answered yet), after checking that it waits. */
async function answer(batch: HistoryBatch, asked: AnswerAsked, clock: () => number): Promise<GivenAnswers> {
  const { run, callId, approved, reason, by } = asked;
  const found = await batch.read();
  if (!found.runs.includes(run))
    throw new InvalidArgumentError('run', `the id of a run of ${batch.batch} (${listed(found.runs)})`, run);
  const waiting = found.calls.filter((c) => c.run === run);
  // Answered, and journaled by the run: it waits on that call no more.
  const journaled = found.journaled.filter((a) => a.run === run && (callId === undefined || a.callId === callId));
  if (callId !== undefined && journaled.length > 0)
    throw new AnsweredAlreadyError(
      { run, callId },
      journaled[0],
      waiting.length === 0
        ? 'the run has taken it and goes on; nothing waits for another answer'
        : `the run has taken it; it waits on ${listed(waiting.map((c) => c.callId))} still`,
    );
  if (waiting.length === 0) {
    // Answered from here before, and taken: the run went on with that answer.
    const given = found.answers.filter((a) => a.run === run && (callId === undefined || a.callId === callId));
    const last = given.sort((a, b) => b.at - a.at)[0];
    if (last !== undefined)
      throw new AnsweredAlreadyError(last, last, 'the run has gone on with it; nothing waits for another answer');
    throw new Error(
      `run ${escapeControl(run)} does not wait for approval (its history does not end in AwaitingApproval: ` +
        `it went on, ended or has not started); there is nothing to answer — see ${batch.listHint} for the calls that wait`,
    );
  }
  let targets: WaitingCall[];
  if (callId !== undefined) {
    const call = waiting.find((c) => c.callId === callId);
    if (call === undefined)
      throw new InvalidArgumentError(
        'callId',
        `the id of a call run ${escapeControl(run)} waits on (${listed(waiting.map((c) => c.callId))})`,
        callId,
      );
    targets = [call];
  } else {
    targets = waiting.filter((c) => c.answer === undefined);
    if (targets.length === 0)
      throw new Error(
        `every call run ${escapeControl(run)} waits on was answered already (${listed(waiting.map((c) => c.callId))}): ` +
          'an answer is taken once; the batch takes them within a second, or when it resumes',
      );
  }
  const at = clock();
  for (const call of targets) {
    const given = {
      run,
      callId: call.callId,
      approved,
      ...(approved ? {} : { reason: reason ?? 'denied by a person' }),
      at,
      waitingSince: call.since,
      by,
    };
    if (call.answer !== undefined) throw new AnsweredAlreadyError(given, call.answer);
    await batch.box.write(given);
  }
  return {
    calls: targets,
    next: found.running
      ? 'the running batch takes it within a second'
      : 'no batch runs there now: resuming it (runBatch with resume: true) takes it when the run waits again',
  };
}
