import * as os from 'node:os';
import { InvalidArgumentError, type ApprovalDecision, type PendingApproval } from 'agent-state-machine';
import { messageOf } from '../../internal/messageOf';

/**
 * What a distributed batch's `onApproval` gets for a run parked on its worker: its calls, and
 * how to answer them from this process. Each answer goes to Redis at once; the run's worker
 * takes them when every call has one. `approve` and `deny` throw an InvalidArgumentError for a
 * call that is not one of the run's, or that this request answered already; the promise they
 * return resolves once the answer is in Redis, and rejects (an InvalidArgumentError naming the
 * call) when another process answered that call first or the run has gone on or ended, or
 * when Redis does not answer (the call may then be answered again). Each failure is a process
 * warning too, so that an answer not awaited is never lost without a word.
 */
export interface DistributedApprovalRequest {
  /** The task's id and index. */
  id: string;
  index: number;
  /** The tool calls waiting for an answer, in call order. */
  calls: PendingApproval[];
  /** Approves a call; with `{ input }` it runs with that input instead of the LLM's. */
  approve: (callId: string, options?: { input?: unknown }) => Promise<void>;
  /** Denies a call: it does not run, and the LLM gets `denied: <reason>` as its result. */
  deny: (callId: string, reason?: string) => Promise<void>;
}

/** A run's request as the batch's events carry it. */
export interface OpenRequest {
  index: number;
  id: string;
  requestId: string;
  calls: PendingApproval[];
}

/**
 * Calls `onApproval` for a run's open request, with `approve` and `deny` that record each
 * answer through `decide` (in Redis, once per call). A throw or a rejection of `onApproval`,
 * and an answer's failure that its caller did not handle, go to `onProblem`; the run stays parked.
 */
export function approvalNotice(
  onApproval: ((request: DistributedApprovalRequest) => void | Promise<void>) | undefined,
  decide: (request: OpenRequest, decision: ApprovalDecision) => Promise<void>,
  onProblem: (message: string) => void,
): (request: OpenRequest) => void {
  return (open) => {
    if (onApproval === undefined) return;
    const answered = new Set<string>();
    const answer = (decision: ApprovalDecision): Promise<void> => {
      const { callId } = decision;
      if (!open.calls.some((c) => c.callId === callId))
        throw new InvalidArgumentError(
          'callId',
          `the id of a call run ${open.id} waits on (${open.calls.map((c) => c.callId).join(', ')})`,
          callId,
        );
      if (answered.has(callId))
        throw new InvalidArgumentError('callId', 'a call not answered yet (it was answered already)', callId);
      answered.add(callId);
      const sent = decide(open, decision);
      // Said even when the caller does not await it: an answer lost without a word would leave the run parked.
      sent.catch((error: unknown) => {
        // Not refused but not sent (Redis did not answer): it may be given again.
        if (!(error instanceof InvalidArgumentError)) answered.delete(callId);
        onProblem(`the answer to ${callId} of run ${open.id} was not taken: ${messageOf(error)}`);
      });
      return sent;
    };
    const request: DistributedApprovalRequest = {
      id: open.id,
      index: open.index,
      calls: open.calls.map((c) => ({ ...c })),
      approve: (callId, options = {}) => {
        if (typeof options !== 'object' || options === null)
          throw new InvalidArgumentError('options', 'an object { input? }', options);
        return answer(
          'input' in options ? { callId, approved: true, input: options.input } : { callId, approved: true },
        );
      },
      deny: (callId, reason = 'denied by a person') => {
        if (typeof reason !== 'string') throw new InvalidArgumentError('reason', 'a string', reason);
        return answer({ callId, approved: false, reason });
      },
    };
    try {
      const returned: unknown = onApproval(request);
      if (returned instanceof Promise)
        returned.catch((error: unknown) =>
          onProblem(`onApproval failed for run ${open.id}: ${messageOf(error)}; the run stays parked`),
        );
    } catch (error) {
      onProblem(`onApproval threw for run ${open.id}: ${messageOf(error)}; the run stays parked`);
    }
  };
}

/** `onApproval` of `submitBatch` and `attachBatch`: a function. */
export function assertOnApproval(onApproval: unknown): void {
  if (onApproval !== undefined && typeof onApproval !== 'function')
    throw new InvalidArgumentError(
      'onApproval',
      'a function ({ id, index, calls, approve, deny }) => void',
      onApproval,
    );
}

/** Who the answers of a handle's `onApproval` come from, as Redis keeps them: `onApproval of attachBatch (pid 4242 on build-7)`. */
export function answeredBy(handle: 'submitBatch' | 'attachBatch'): string {
  return `onApproval of ${handle} (pid ${process.pid} on ${os.hostname()})`;
}
