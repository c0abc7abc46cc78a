import { llmResponded, type MoveEvent } from '../turn/turnEvents';
import type { AttemptMoney, LLMCallInput } from '../AgentEvents';
import { safeLog } from '../AgentLogger';
import type { LLMResponse, OperationContext } from '../AgentLoop';
import { planRetry } from '../retry/planRetry';
import { afterFailure, failureLine } from './afterFailure';
import { chargeFailure } from './chargeFailure';
import { moneyOf } from './endAttempt';
import { LLMCallError } from '../TurnError';
import type { Attempt, LLMOperation, LLMOutcome } from '../turn/LLMOutcome';
import { NOTHING_RESERVED, type CallFlags } from './reserveLLMCall';
import { serveRecorded } from './serveRecorded';
import { gateAttempt, RAISED } from './gateAttempt';
import { answeredAttempt, journalAttempt } from './answeredAttempt';
import type { TurnScope } from '../turn/TurnScope';
import type { WrapHold } from '../money/ExternalBudget';

export type { Attempt, LLMOperation, LLMOutcome, ResponseNotes } from '../turn/LLMOutcome';

/**
 * One LLM call with retries: the budgets are checked (and external ones reserved) before each
 * attempt, every attempt is counted and charged, its response priced and checked against the
 * contract, and a failure retried by the plan (`planRetry`). Reports `llmAttempt` events.
 */
export async function callLLM(
  scope: TurnScope,
  operation: LLMOperation,
  input: LLMCallInput,
  invoke: (ctx: OperationContext) => Promise<LLMResponse>,
  flags?: CallFlags,
  wrapHold?: WrapHold,
  handOver?: () => void,
): Promise<LLMOutcome> {
  const { settings: s, meter, signal, turn } = scope;
  // The request flags reach the loop's bound and its call alike.
  if (flags !== undefined) invoke = flagged(invoke, flags);
  if (s.recording !== undefined) {
    const served = await serveRecorded(scope, operation, input);
    if (served !== undefined) return served;
  }
  const failures: Attempt[] = [];
  for (let attempt = 1; ; attempt++) {
    if (signal.aborted) return { kind: 'aborted', data: { failures } };
    let gate = gateAttempt(scope, operation, input, attempt, failures, flags, wrapHold, handOver);
    // Awaited only when the gate waits: most attempts pass it at once (bench: turncore, an
    // await per attempt read the adapter turn 0.84× the round start against 0.80×).
    if (gate instanceof Promise) gate = await gate;
    if (gate === RAISED) {
      // Nothing was sent: the same attempt is planned again under the raised cap.
      attempt -= 1;
      continue;
    }
    if ('kind' in gate) return gate;
    const held = gate;
    // The meter read the clock in the gate's checks. Read again after an external budget's
    // reserve (awaited since), and for a planned call (held: a strict cap, the ledger, an
    // external dollar cap): then the attempt starts after its hold and its reserve line, and
    // after the ledger's commit when one was awaited.
    const startedAt = meter.hasExternal || held !== NOTHING_RESERVED ? s.clock() : meter.lastReading;
    const settled = await scope.settle(invoke, attempt, held.maxOutputTokens);
    const endedAt = s.clock();
    if (settled.kind === 'abandoned' || (settled.kind === 'threw' && signal.aborted)) {
      // An abandoned or aborted request may still be billed: charged at its hold unless it never left.
      const error = settled.kind === 'threw' ? settled.error : new Error(`abandoned: ${scope.reason()}`);
      const { charge, usage, passed } = chargeFailure(
        { meter, held, operation, turn, boundBy: "the loop's llmCallBound", policy: s },
        error,
      );
      journalAttempt(
        scope,
        { operation, input, attempt, startedAt, endedAt },
        failureLine(error, charge, usage, passed),
      );
      if (s.hears('llmAttempt'))
        emitFailed(scope, operation, input, attempt, startedAt, endedAt, error, false, moneyOf(charge));
      return { kind: 'aborted', data: { attempt, failures } };
    }
    if (settled.kind === 'value')
      return answeredAttempt(scope, { operation, input, attempt, held, startedAt, endedAt, failures }, settled.value);
    // Charged before the retry is planned: the next attempt's hold sees what this one may have cost.
    const answered = chargeFailure(
      { meter, held, operation, turn, boundBy: "the loop's llmCallBound", policy: s },
      settled.error,
    );
    const { charge, passed } = answered;
    const ended = afterFailure(
      attempt,
      settled.error,
      charge,
      () => planRetry(settled.error, attempt, s.retry, s.random, s.clock),
      answered,
    );
    const { failure, cut, next: plan } = ended;
    failures.push(failure);
    journalAttempt(scope, { operation, input, attempt, startedAt, endedAt }, ended.line);
    // A refused answer past its bound: under a strict cap the run stops, and every budget it shares, as for any answer.
    if (passed !== undefined && meter.tripsOnBound) {
      const spent = meter.trip(passed);
      await meter.tripped();
      return { kind: 'budget', spent, failures };
    }
    if (s.hears('llmAttempt'))
      emitFailed(
        scope,
        operation,
        input,
        attempt,
        startedAt,
        endedAt,
        settled.error,
        plan?.kind === 'wait',
        moneyOf(charge),
      );
    if (plan?.kind === 'error') return { kind: 'failed', error: plan.error, data: { operation, failures } };
    if (plan?.kind !== 'wait')
      return {
        kind: 'failed',
        error: new LLMCallError(operation, failures, settled.error),
        data: { operation, failures, ...(cut && { cutAtBound: cut }) },
      };
    safeLog(s.logger, 'warn', `${operation} attempt ${attempt} failed (${failure.error}); retrying in ${plan.ms} ms`, {
      turn,
    });
    await s.sleep(plan.ms, signal);
  }
}

/** The record of ProcessingLLMResponse for a response the adapter's call got. */
export function responseRecord(
  llm: Extract<LLMOutcome, { kind: 'response' }>,
  toolCalls: number,
  usage: unknown,
): MoveEvent {
  const { notes } = llm;
  return llmResponded(
    llm.attempts,
    llm.failures,
    toolCalls,
    llm.response,
    notes?.usageProblems,
    notes?.unknownCost,
    notes?.fromJournal,
    usage,
  );
}

/** The `llmAttempt` event of an attempt that failed (or was abandoned). */
function emitFailed(
  scope: TurnScope,
  operation: LLMOperation,
  input: LLMCallInput,
  attempt: number,
  startedAt: number,
  endedAt: number,
  error: unknown,
  willRetry: boolean,
  money: AttemptMoney,
): void {
  scope.settings.emit('llmAttempt', {
    turn: scope.turn,
    operation,
    attempt,
    startedAt,
    endedAt,
    input,
    error,
    willRetry,
    money,
  });
}

function flagged(
  invoke: (ctx: OperationContext) => Promise<LLMResponse>,
  flags: CallFlags,
): (ctx: OperationContext) => Promise<LLMResponse> {
  return (ctx) => invoke({ ...ctx, ...flags });
}
