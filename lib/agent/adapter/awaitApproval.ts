import { State, type StateName } from '../../../states/StateName';
import { plural } from '../../internal/text';
import type { ToolCall } from '../AgentLoop';
import { ApprovalGate, type ApprovalDecision } from '../ApprovalGate';
import { ExtensionState } from '../extensionStates';
import { namesOf } from '../turn/namesOf';
import type { ToolSlot } from '../calls/runTools';
import { TurnCancelledError } from '../TurnError';
import type { TurnMoves } from './TurnMoves';
import type { TurnResult } from '../TurnResult';
import type { TurnScope } from '../turn/TurnScope';

// Extension states: the adapter checked at construction that its table has their edges.
const AWAITING_APPROVAL = ExtensionState.AwaitingApproval as unknown as StateName;
const APPROVAL_TIMED_OUT = ExtensionState.ApprovalTimedOut as unknown as StateName;

/**
 * Moves to AwaitingApproval with the requests in the move's data, tells the caller (the
 * turn's result so far: `awaiting_approval`), and waits for every answer, the timeout or a
 * cancel — the wait's wall time is not the turn's (`maxWallMs`): it has its own bound. Denied
 * calls are answered with the reason at once; approved ones run, with the input the person
 * gave if any. `slots` are the round's calls (a denied one gets its result here); `onPause` is
 * told when the wait starts.
 */
export async function awaitApproval(
  scope: TurnScope,
  moves: TurnMoves,
  slots: ToolSlot[] | undefined,
  onPause: ((gate: ApprovalGate, result: TurnResult) => void) | undefined,
  waiting: ToolCall[],
  timeoutMs: number | undefined,
): Promise<{ kind: 'answered'; decisions: ApprovalDecision[] } | { kind: 'ended'; result: TurnResult }> {
  const { meter, signal } = scope;
  const gate = new ApprovalGate(waiting);
  const requests = gate.pending;
  const data: Record<string, unknown> = { calls: requests };
  if (timeoutMs !== undefined) data['timeoutMs'] = timeoutMs;
  moves.move(AWAITING_APPROVAL, {
    description: `waiting for approval of ${plural(waiting.length, 'tool call')}: ${namesOf(waiting)}`,
    data,
  });
  meter.pauseWall();
  const stopTimer = new AbortController();
  let onAbort: (() => void) | undefined;
  const how = await new Promise<'answered' | 'timeout' | 'aborted'>((resolve) => {
    if (signal.aborted) return resolve('aborted');
    onAbort = () => resolve('aborted');
    signal.addEventListener('abort', onAbort, { once: true });
    void gate.answered.then(() => resolve('answered'));
    if (timeoutMs !== undefined) void scope.settings.sleep(timeoutMs, stopTimer.signal).then(() => resolve('timeout'));
    onPause?.(gate, moves.paused(requests));
  });
  if (onAbort !== undefined) signal.removeEventListener('abort', onAbort);
  stopTimer.abort();
  meter.resumeWall();
  const ids = waiting.map((c) => c.id);
  if (how === 'aborted') {
    if (scope.deadline !== undefined) return { kind: 'ended', result: moves.cancel(AWAITING_APPROVAL) };
    const reason = scope.reason();
    return {
      kind: 'ended',
      result: moves.end(
        State.Cancelled,
        `cancelled while waiting for approval: ${reason}`,
        { reason, interrupted: ids },
        'cancelled',
        { error: new TurnCancelledError(reason, AWAITING_APPROVAL) },
      ),
    };
  }
  if (how === 'timeout') {
    const reason = `no answer to the approval request within ${timeoutMs} ms`;
    return {
      kind: 'ended',
      result: moves.end(
        APPROVAL_TIMED_OUT,
        reason,
        { timeoutMs, unanswered: gate.pending.map((p) => p.callId) },
        'cancelled',
        { error: new TurnCancelledError(reason, AWAITING_APPROVAL) },
      ),
    };
  }
  const decisions = gate.decisions();
  const at = scope.settings.clock();
  for (const decision of decisions) {
    const slot = slots?.find((s) => s.call.id === decision.callId);
    if (slot === undefined) continue;
    if (!decision.approved) {
      const note = `denied: ${decision.reason}`;
      slot.status = 'not_run';
      slot.note = note;
      slot.result = { callId: slot.call.id, output: note, isError: true };
      slot.startedAt = slot.endedAt = at;
    } else if ('input' in decision) slot.call = { ...slot.call, input: decision.input };
  }
  return { kind: 'answered', decisions };
}
