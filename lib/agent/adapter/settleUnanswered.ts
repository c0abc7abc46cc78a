import { settleWithGrace } from '../../internal/settleWithGrace';
import { safeLog } from '../AgentLogger';
import type { SettleInfo } from '../AgentLoop';
import type { ToolSlot } from '../calls/runTools';
import { OperationError } from '../TurnError';
import type { TurnResult, UnansweredToolCall } from '../TurnResult';
import type { TurnScope } from '../turn/TurnScope';

/**
 * The tool calls whose results never reached the LLM (`pending`) get an answer after a turn
 * that did not end normally: `settleToolCalls` once, with the cancel grace, else
 * `unansweredToolCalls` in the result. Never changes the outcome. Calls that never ran are
 * reported (`toolCall` event, journal) as `not_run`.
 */
export async function settleUnanswered(
  scope: TurnScope,
  pending: readonly ToolSlot[],
  result: TurnResult,
): Promise<TurnResult> {
  const { settings: s, signal, turn } = scope;
  const { cancelGraceMs, sleep, agent } = s;
  if (result.outcome === 'end_of_turn') return result;
  const reason = result.error?.message ?? result.outcome;
  const unanswered: UnansweredToolCall[] = pending.map((slot) => ({
    call: slot.call,
    result: slot.result ?? { callId: slot.call.id, output: `not run: ${reason}`, isError: true },
  }));
  for (const [i, slot] of pending.entries()) {
    if (slot.result !== undefined) continue;
    const hears = s.hears('toolCall');
    if (!hears && s.journal === undefined) continue;
    const at = s.clock();
    const event = {
      turn,
      call: slot.call,
      status: 'not_run' as const,
      startedAt: at,
      endedAt: at,
      result: unanswered[i]!.result,
    };
    s.journal?.({ type: 'tool', ...event });
    if (hears) s.emit('toolCall', event);
  }
  const settle = agent.settleToolCalls;
  if (typeof settle !== 'function') return { ...result, unansweredToolCalls: unanswered };
  // Only an ended turn is settled: a turn waiting for approval has not ended.
  const info: SettleInfo = { outcome: result.outcome as SettleInfo['outcome'], reason, turn };
  const results = unanswered.map((u) => u.result);
  // A cancelled turn's signal has fired already: the operation gets the grace at once. Otherwise
  // it gets the grace as its whole time, so that settling never hangs a turn.
  const stopper = new AbortController();
  const settleSignal = signal.aborted ? signal : stopper.signal;
  if (!signal.aborted) {
    void sleep(cancelGraceMs, signal).then(() =>
      stopper.abort(`settleToolCalls did not finish within ${cancelGraceMs} ms`),
    );
  }
  const settled = await settleWithGrace(
    () => settle.call(agent, results, info, { signal: settleSignal, turn }),
    settleSignal,
    cancelGraceMs,
    sleep,
  );
  if (settled.kind === 'value') return result;
  const cause =
    settled.kind === 'threw' ? settled.error : new Error(`did not finish within the ${cancelGraceMs} ms grace`);
  const error = new OperationError('settleToolCalls', cause);
  safeLog(s.logger, 'warn', `${error.message}; the tool calls stay unanswered (TurnResult.unansweredToolCalls)`, {
    turn,
  });
  return { ...result, unansweredToolCalls: unanswered, settleError: error };
}
