import { State, type StateName } from '../../../states/StateName';
import type { ToolCall } from '../AgentLoop';
import { ApprovalGate, type ApprovalDecision } from '../ApprovalGate';
import { ExtensionState } from '../extensionStates';
import type { ToolSlot } from '../calls/runTools';
import { TurnCancelledError } from '../TurnError';
import type { TurnMoves } from './TurnMoves';
import type { TurnResult } from '../TurnResult';
import type { TurnScope, TurnSettings } from '../turn/TurnScope';

// Extension states: the adapter checked at construction that its table has their edges.
const AWAITING_APPROVAL = ExtensionState.AwaitingApproval as unknown as StateName;
const APPROVAL_TIMED_OUT = ExtensionState.ApprovalTimedOut as unknown as StateName;

/**
 * Moves to AwaitingApproval with the requests in the move's data, tells the caller (the
 * turn's result so far: `awaiting_approval`), and waits for every answer, the timeout or a
 * cancel — the wait's wall time is not the turn's (`maxWallMs`): it has its own bound. Each
 * answer is journaled as it is taken (an `approval` line, `ApprovalJournal`), and the tools run
 * once the lines are kept. Of a response `served` from the journal of the interrupted run this
 * one resumes, the answers that run journaled are taken again, not asked again: when every
 * call has one, the turn does not stop. Denied calls are answered with the reason at once;
 * approved ones run, with the input the person gave if any. `slots` are the round's calls (a
 * denied one gets its result here); `onPause` is told when the wait starts.
 */
export async function awaitApproval(
  scope: TurnScope,
  moves: TurnMoves,
  slots: ToolSlot[] | undefined,
  onPause: ((gate: ApprovalGate, result: TurnResult) => void) | undefined,
  waiting: ToolCall[],
  approval: NonNullable<TurnSettings['approval']>,
  served: boolean,
): Promise<{ kind: 'answered'; decisions: ApprovalDecision[] } | { kind: 'ended'; result: TurnResult }> {
  const { meter, signal, settings } = scope;
  const { journal, timeoutMs } = approval;
  // No tool of the round starts before every answer is in: all of them waited.
  const known = served ? journal.recorded(waiting, slots?.map((s) => s.call) ?? waiting) : [];
  const write = settings.journal === undefined ? undefined : settings.ledger;
  let fromJournal = true;
  const gate = new ApprovalGate(waiting, (decision) =>
    journal.write(
      write,
      scope.turn,
      waiting.find((c) => c.id === decision.callId),
      decision,
      settings.clock(),
      fromJournal,
    ),
  );
  const move = journal.waitMove(waiting, known);
  if (timeoutMs !== undefined) move.data['timeoutMs'] = timeoutMs;
  moves.move(AWAITING_APPROVAL, move);
  for (const decision of known) gate.decide(decision);
  fromJournal = false;
  meter.pauseWall();
  const stopTimer = new AbortController();
  let onAbort: (() => void) | undefined;
  const how = await new Promise<'answered' | 'timeout' | 'aborted'>((resolve) => {
    if (signal.aborted) return resolve('aborted');
    if (gate.complete) return resolve('answered');
    onAbort = () => resolve('aborted');
    signal.addEventListener('abort', onAbort, { once: true });
    void gate.answered.then(() => resolve('answered'));
    if (timeoutMs !== undefined) void settings.sleep(timeoutMs, stopTimer.signal).then(() => resolve('timeout'));
    onPause?.(gate, moves.paused(gate.pending));
  });
  if (onAbort !== undefined) signal.removeEventListener('abort', onAbort);
  stopTimer.abort();
  // The answers' lines are kept before a tool runs (a line not kept is the sink's error, which the machine reports).
  const commits = journal.commits();
  if (commits.length > 0) await Promise.allSettled(commits);
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
  const at = settings.clock();
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
