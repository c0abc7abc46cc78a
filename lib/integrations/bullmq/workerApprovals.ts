import { InvalidArgumentError } from 'agent-state-machine';
import { assertApprovalPolicy } from 'agent-state-machine/internal';
import {
  approvalWatchKey,
  askApproval,
  closeApproval,
  readDecisions,
  type ApprovalPlace,
  type Within,
} from './approvalRecords';
import type { ParkWatch } from './ParkWatch';
import type { RunApprovals } from './parkRun';

/**
 * A worker's approval policy and timeout, as `AgentWithStateMachine` takes them, checked when
 * the worker starts. Beside `drive` the policy is put on the framework's tools by its integration,
 * and the framework's own approvals (AI SDK `needsApproval`, LangGraph `interrupt()`) park the
 * run too: the timeout bounds those waits with no policy.
 */
export function assertWorkerApproval(approve: unknown, timeoutMs: unknown, framework: boolean): void {
  assertApprovalPolicy(approve);
  if (timeoutMs === undefined) return;
  if (!(typeof timeoutMs === 'number' && Number.isFinite(timeoutMs) && timeoutMs >= 0))
    throw new InvalidArgumentError('approvalTimeoutMs', 'a non-negative number of milliseconds', timeoutMs);
  // Beside `drive` the framework asks for approval itself: the timeout bounds its waits.
  if (approve === undefined && !framework)
    throw new InvalidArgumentError('approve', 'an approval policy when approvalTimeoutMs is set', approve);
}

/**
 * The approval requests of one run of a worker (attempt `attempt`), in Redis: request number
 * `park` is `<attempt>.<park>`, so that no answer reaches a later attempt's request; its
 * answers are waited for on `watch` (the approval channel, or its poll).
 */
export function runApprovals(
  place: Omit<ApprovalPlace, 'requestId'>,
  attempt: number,
  watch: ParkWatch,
  within: Within,
): RunApprovals {
  const requestId = (park: number): string => `${attempt}.${park}`;
  const at = (park: number): ApprovalPlace => ({ ...place, requestId: requestId(park) });
  return {
    ask: (park, calls) => askApproval(at(park), calls, within),
    answers: (park, callIds, signal) =>
      watch.wait(
        approvalWatchKey(place.keys, place.index, requestId(park)),
        () => readDecisions(at(park), callIds, within),
        (answers) => answers !== undefined,
        signal,
        'for approval',
      ),
    close: (park, callIds, taken) => closeApproval(at(park), callIds, within, taken),
  };
}
