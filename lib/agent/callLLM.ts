import { formatUsd } from '../internal/formatUsd';
import { llmResponded, type MoveEvent } from './turnEvents';
import { failureMessage } from '../internal/failureMessage';
import type { LLMCallInput } from './AgentEvents';
import { safeLog } from './AgentLogger';
import type { LLMResponse, OperationContext, Usage } from './AgentLoop';
import { llmResponseProblem, splitUsage } from './checkAgentOutput';
import { planRetry } from './planRetry';
import { boundExceeded } from './boundExceeded';
import { cutAtBoundOf } from './cutAtBound';
import { chargeResponse } from './chargeResponse';
import { endAttempt, chargeFields } from './endAttempt';
import { ContractViolationError, LLMCallError, OperationError } from './TurnError';
import { journalError, type LlmJournalEntry, type ReserveJournalEntry } from './JournalEntry';
import type { Attempt, LLMOperation, LLMOutcome, ResponseNotes } from './LLMOutcome';
import { boundLLMCall, NOTHING_RESERVED, reserveLLMCall, type CallFlags, type Reservation } from './reserveLLMCall';
import { serveRecorded } from './serveRecorded';
import { commitFailure } from './commitFailure';
import type { TurnScope } from './TurnScope';
import type { WrapHold } from './ExternalBudget';
import type { UsageDelta } from './UsageTotals';

export type { Attempt, LLMOperation, LLMOutcome, ResponseNotes } from './LLMOutcome';

/** Charged before every attempt; budgets only read a delta. */
const ONE_LLM_CALL: UsageDelta = Object.freeze({ llmCalls: 1 });

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
    // The request's bound and worst case, when a strict cap, the ledger or an external dollar
    // cap needs them (the only await before the call, besides external budgets).
    const planned =
      meter.strict || s.ledger !== undefined || meter.externalCapsCost
        ? await boundLLMCall(scope, input, attempt, flags)
        : undefined;
    if (planned !== undefined && 'kind' in planned)
      return { kind: 'failed', error: planned.error, data: { operation, failures } };
    if (signal.aborted) return { kind: 'aborted', data: { failures } };
    // From the check to the call's count, no await: runs sharing a budget are counted one by one.
    const inProcess = meter.spent();
    if (inProcess !== undefined) return { kind: 'budget', spent: inProcess, failures };
    // The worst case held against strict caps (and stated in the ledger) before the call starts.
    const reserved = reserveLLMCall(meter, s.pricing, s.minOutputTokens, planned);
    if (reserved.kind === 'budget' && reserved.spent.raises !== undefined && scope.waitForRaise !== undefined) {
      // A pausing shared cap: nothing was sent, so the same attempt is planned again once it is raised.
      if (!(await scope.waitForRaise(reserved.spent))) return { kind: 'aborted', data: { failures } };
      attempt -= 1;
      continue;
    }
    if (reserved.kind === 'budget') return { kind: 'budget', spent: reserved.spent, failures };
    const held = reserved.reservation;
    if (meter.hasExternal) {
      const spent = await meter.reserve(
        'llm',
        held.externalHold === undefined
          ? undefined
          : { costUsd: held.externalHold, ...(wrapHold === undefined ? {} : { wrapUp: wrapHold }) },
      );
      if (spent !== undefined) meter.release(held.held, undefined);
      if (spent instanceof OperationError) return { kind: 'failed', error: spent, data: { operation, failures } };
      if (spent?.raises !== undefined && scope.waitForRaise !== undefined) {
        // An external pausing cap (a BullMQ batch's): as above, the same attempt once it is raised.
        if (!(await scope.waitForRaise(spent))) return { kind: 'aborted', data: { failures } };
        attempt -= 1;
        continue;
      }
      if (spent !== undefined) return { kind: 'budget', spent, failures };
    }
    const commit =
      s.ledger === undefined
        ? undefined
        : s.ledger(reserveLine(turn, operation, attempt, s.clock(), held, s.ledgerDefaultMaxCostUsd));
    // Counted before any await, as the checks above need; a call whose reserve line is then not kept stays counted.
    meter.charge(ONE_LLM_CALL, false);
    // A store's commit (a file sink keeps the line before it returns): no call leaves before its reserve line is kept.
    if (commit !== undefined && commit !== null) {
      const unkept = await commitFailure(commit);
      if (unkept !== undefined) {
        // The request never left: its hold goes back.
        meter.release(held.held, held.externalHold);
        return {
          kind: 'failed',
          error: new OperationError("the ledger's reserve line", unkept),
          data: { operation, failures },
        };
      }
    }
    // The meter has just read the clock, unless an external budget, the bound or a commit was awaited since.
    const startedAt =
      meter.hasExternal || held !== NOTHING_RESERVED || commit !== undefined ? s.clock() : meter.lastReading;
    const settled = await scope.settle(invoke, attempt, held.maxOutputTokens);
    const endedAt = s.clock();
    // The attempt's journal line: what it carried, then its response or its error. Without
    // `journal` but with `ledger`, only its cost and usage.
    const journal = (
      outcome: Pick<
        LlmJournalEntry,
        'response' | 'costUsd' | 'error' | 'usage' | 'chargedAtHold' | 'boundExceeded' | 'cutAtBound'
      >,
    ): void => {
      if (s.journal !== undefined) {
        const { usage: _usage, ...full } = outcome;
        s.journal({ type: 'llm', turn, operation, attempt, startedAt, endedAt, input, ...full });
      } else if (s.ledger !== undefined) {
        const { response: _response, ...money } = outcome;
        s.ledger({ type: 'llm', turn, operation, attempt, startedAt, endedAt, ledgerOnly: true, ...money });
      }
    };
    if (settled.kind === 'abandoned' || (settled.kind === 'threw' && signal.aborted)) {
      // An abandoned or aborted request may still be billed: charged at its hold unless it never left.
      const error = settled.kind === 'threw' ? settled.error : new Error(`abandoned: ${scope.reason()}`);
      const charge = endAttempt(meter, held, { kind: 'failed', error });
      journal({ error: journalError(error), ...chargeFields(charge) });
      s.emit('llmAttempt', { turn, operation, attempt, startedAt, endedAt, input, error, willRetry: false });
      return { kind: 'aborted', data: { attempt, failures } };
    }
    if (settled.kind === 'value') {
      const value: unknown = settled.value;
      // Usage the response reports was paid for, even if the rest of it is malformed.
      const reported: unknown =
        typeof value === 'object' && value !== null ? (value as { usage?: unknown }).usage : undefined;
      const model: unknown =
        typeof value === 'object' && value !== null ? (value as { model?: unknown }).model : undefined;
      const { valid, problems } = splitUsage(reported);
      const { priced, charge, costUsd } = chargeResponse(
        meter,
        held,
        valid,
        typeof model === 'string' ? model : undefined,
        operation,
        s,
      );
      // A response past its request's bound: the server ignored max tokens (a fact for the file).
      const passed = boundExceeded(held.bound, valid, costUsd, held.worstUsd);
      if (held.worstUsd !== undefined && priced.costUsd !== undefined && priced.costUsd > held.worstUsd)
        safeLog(
          s.logger,
          'warn',
          `${operation} cost ${formatUsd(priced.costUsd)} but its bound's worst case was ${formatUsd(held.worstUsd)}: the loop's llmCallBound or pricing is too low`,
          { turn },
        );
      // As the loop returned it, malformed or not, so that a replay meets what this run met. Its
      // fields are not even gathered when neither journal nor ledger is on: this runs on every response.
      if (s.journal !== undefined || s.ledger !== undefined)
        journal({
          response: value as LLMResponse,
          usage: valid,
          ...chargeFields(charge),
          ...(passed && { boundExceeded: passed }),
        });
      const problem = llmResponseProblem(value);
      // Whether code of others (pricing, a logger, listeners) may have run since endedAt was read.
      let othersRan = valid.costUsd === undefined || problems.length > 0;
      if (s.hears('llmAttempt')) {
        othersRan = true;
        const usage: Usage = costUsd === undefined || costUsd === valid.costUsd ? valid : { ...valid, costUsd };
        const outcome =
          problem === undefined
            ? { response: value as LLMResponse }
            : { error: new ContractViolationError(operation, problem, value) };
        s.emit('llmAttempt', {
          turn,
          operation,
          attempt,
          startedAt,
          endedAt,
          input,
          ...outcome,
          willRetry: false,
          usage,
        });
      }
      if (problems.length > 0)
        safeLog(
          s.logger,
          'warn',
          `${operation} reported malformed usage (charged its valid fields): ${problems.join('; ')}`,
          { turn },
        );
      // Without external budgets there is nothing to wait for: only the wall time to charge.
      if (!meter.hasExternal) meter.chargeWall(othersRan ? s.clock() : endedAt);
      else {
        const external = await meter.flush();
        if (external instanceof OperationError) return { kind: 'failed', error: external, data: { operation } };
      }
      // Its bound cannot be trusted: under a strict cap the run stops, and every budget it shares.
      if (passed !== undefined && meter.tripsOnBound) {
        const spent = meter.trip(passed);
        await meter.tripped();
        return { kind: 'budget', spent, failures };
      }
      if (problem !== undefined)
        return {
          kind: 'failed',
          error: new ContractViolationError(operation, problem, value),
          data: { operation, problem },
        };
      // A bad number where a cap measures usage would leave the cap blind: refused, not skipped.
      if (problems.length > 0 && (meter.caps('maxCostUsd') || meter.caps('maxTokens')))
        return {
          kind: 'failed',
          error: new ContractViolationError(operation, `reported bad usage: ${problems.join('; ')}`, reported),
          data: { operation, usageProblems: problems },
        };
      // The response's own usage, apart from the run's total that the record ending the turn carries as `usage`.
      if (priced.error !== undefined)
        return { kind: 'failed', error: priced.error, data: { operation, responseUsage: valid } };
      let notes: ResponseNotes | undefined;
      if (problems.length > 0) notes = { usageProblems: problems };
      if (priced.note !== undefined) {
        (notes ??= {}).unknownCost = priced.note;
        if (!s.warned.unknownCost) {
          s.warned.unknownCost = true;
          safeLog(s.logger, 'warn', priced.note, { turn });
        }
      }
      return { kind: 'response', response: value as LLMResponse, attempts: attempt, failures, notes };
    }
    // Charged before the retry is planned: the next attempt's hold sees what this one may have cost.
    const charge = endAttempt(meter, held, { kind: 'failed', error: settled.error });
    const failure: Attempt = { attempt, error: failureMessage(settled.error) };
    failures.push(failure);
    // A stream cut at its bound: the server does not stop at max tokens, so a retry would only be cut again.
    const cut = cutAtBoundOf(settled.error);
    journal({ error: journalError(settled.error), ...chargeFields(charge), ...(cut && { cutAtBound: cut }) });
    if (cut !== undefined) {
      failure.noRetry = 'the response stream was cut at its bound';
      s.emit('llmAttempt', {
        turn,
        operation,
        attempt,
        startedAt,
        endedAt,
        input,
        error: settled.error,
        willRetry: false,
      });
      return {
        kind: 'failed',
        error: new LLMCallError(operation, failures, settled.error),
        data: { operation, failures, cutAtBound: cut },
      };
    }
    const plan = planRetry(settled.error, attempt, s.retry, s.random, s.clock);
    const willRetry = plan.kind === 'wait';
    if (plan.kind === 'wait' || plan.kind === 'refused') {
      if (plan.retryAfterMs !== undefined) failure.retryAfterMs = plan.retryAfterMs;
    }
    if (plan.kind === 'refused') failure.noRetry = plan.why;
    s.emit('llmAttempt', { turn, operation, attempt, startedAt, endedAt, input, error: settled.error, willRetry });
    if (plan.kind === 'error') return { kind: 'failed', error: plan.error, data: { operation, failures } };
    if (plan.kind !== 'wait')
      return {
        kind: 'failed',
        error: new LLMCallError(operation, failures, settled.error),
        data: { operation, failures },
      };
    failure.delayMs = plan.ms;
    safeLog(s.logger, 'warn', `${operation} attempt ${attempt} failed (${failure.error}); retrying in ${plan.ms} ms`, {
      turn,
    });
    await s.sleep(plan.ms, signal);
  }
}

/** The ledger's write-ahead line for one attempt: its worst case, else the stated default, else why it is unknown. */
export function reserveLine(
  turn: number,
  operation: ReserveJournalEntry['operation'],
  attempt: number,
  at: number,
  held: Reservation,
  defaultUsd: number | undefined,
  noBound = 'the loop has no llmCallBound',
): ReserveJournalEntry {
  const line: ReserveJournalEntry = { type: 'reserve', turn, operation, attempt, at };
  if (held.worstUsd !== undefined) line.maxCostUsd = held.worstUsd;
  else if (defaultUsd !== undefined) {
    line.maxCostUsd = defaultUsd;
    line.defaulted = true;
  }
  if (held.bound !== undefined) line.bound = held.bound;
  if (held.worstUsd === undefined) line.unknown = held.unknown ?? noBound;
  return line;
}

/** The record of ProcessingLLMResponse for a response the adapter's call got. */
export function responseRecord(
  llm: Extract<LLMOutcome, { kind: 'response' }>,
  toolCalls: number,
  usage: unknown,
): MoveEvent {
  const { response, notes } = llm;
  return llmResponded({
    attempts: llm.attempts,
    failures: llm.failures,
    toolCalls,
    model: response.model,
    finishReason: response.finishReason,
    usageProblems: notes?.usageProblems,
    unknownCost: notes?.unknownCost,
    fromJournal: notes?.fromJournal,
    usage,
  });
}

function flagged(
  invoke: (ctx: OperationContext) => Promise<LLMResponse>,
  flags: CallFlags,
): (ctx: OperationContext) => Promise<LLMResponse> {
  return (ctx) => invoke({ ...ctx, ...flags });
}
