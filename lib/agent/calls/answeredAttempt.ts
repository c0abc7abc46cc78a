import type { LLMCallInput } from '../AgentEvents';
import { safeLog } from '../AgentLogger';
import type { LLMResponse, Usage } from '../AgentLoop';
import { afterChargeOn } from './afterCharge';
import { chargeResponse, type ChargedResponse } from './chargeResponse';
import { writeAttemptLine } from './writeAttemptLine';
import { llmResponseProblem } from '../turn/checkAgentOutput';
import { chargeFields, moneyOf } from './endAttempt';
import type { AttemptEndLine } from '../journal/JournalEntry';
import type { Attempt, LLMOperation, LLMOutcome } from '../turn/LLMOutcome';
import type { Reservation } from './reserveLLMCall';
import { ContractViolationError, OperationError } from '../TurnError';
import type { TurnScope } from '../turn/TurnScope';

/** One attempt of the adapter's LLM call that has ended: what its journal line says of it. */
export interface AttemptTimes {
  operation: LLMOperation;
  input: LLMCallInput;
  attempt: number;
  startedAt: number;
  endedAt: number;
}

/** One attempt of the adapter's LLM call that has ended: what `answeredAttempt` needs of it. */
export interface EndedAttempt extends AttemptTimes {
  held: Reservation;
  /** The call's failed attempts before this one. */
  failures: Attempt[];
}

/**
 * Writes an ended attempt's journal line: what it carried, then its response or its error.
 * Without `journal` but with `ledger`, only its cost and usage.
 */
export function journalAttempt(scope: TurnScope, done: AttemptTimes, outcome: AttemptEndLine): void {
  const s = scope.settings;
  // Nothing made when neither is on: this runs on every attempt.
  if (s.journal === undefined && s.ledger === undefined) return;
  const { operation, input, attempt, startedAt, endedAt } = done;
  writeAttemptLine(s, { type: 'llm', turn: scope.turn, operation, attempt, startedAt, endedAt, input }, outcome);
}

/**
 * The loop answered an attempt with `value`: its reported usage charged (it was paid for even if
 * the rest is malformed) and priced, the journal line written, a response past its bound tripping
 * a strict cap, the contract checked, and the call's outcome.
 */
export function answeredAttempt(
  scope: TurnScope,
  done: EndedAttempt,
  value: unknown,
): LLMOutcome | Promise<LLMOutcome> {
  const { settings: s, meter, turn } = scope;
  const { operation, input, attempt, held, startedAt, endedAt } = done;
  // Usage the response reports was paid for, even if the rest of it is malformed; past its
  // request's bound: a fact for the file, and a strict cap's stop (below).
  const charged = chargeResponse({
    meter,
    held,
    value,
    operation,
    turn,
    boundBy: "the loop's llmCallBound",
    policy: s,
  });
  const { valid, problems, charge, costUsd, passed } = charged;
  // As the loop returned it, malformed or not, so that a replay meets what this run met. Its
  // fields are not even gathered when neither journal nor ledger is on: this runs on every response.
  if (s.journal !== undefined || s.ledger !== undefined)
    journalAttempt(scope, done, {
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
      money: moneyOf(charge),
    });
  }
  if (problems.length > 0)
    safeLog(
      s.logger,
      'warn',
      `${operation} reported malformed usage (charged its valid fields): ${problems.join('; ')}`,
      { turn },
    );
  // Without external budgets there is nothing to wait for: only the wall time to charge, and the
  // outcome comes back at once, not in a promise (this runs on every response).
  if (!meter.hasExternal) {
    meter.chargeWall(othersRan ? s.clock() : endedAt);
    return outcomeOf(scope, done, value, charged, problem);
  }
  return meter
    .flush()
    .then((external) =>
      external instanceof OperationError
        ? { kind: 'failed', error: external, data: { operation } }
        : outcomeOf(scope, done, value, charged, problem),
    );
}

/** The outcome of an answered attempt once it is charged, by the decision both drivers share (`afterCharge`). */
function outcomeOf(
  scope: TurnScope,
  done: EndedAttempt,
  value: unknown,
  charged: ChargedResponse,
  problem: string | undefined,
): LLMOutcome | Promise<LLMOutcome> {
  const { settings: s, meter, turn } = scope;
  const { operation, attempt, failures } = done;
  const next = afterChargeOn(meter, charged, operation, value, problem, s.warned.unknownCost);
  switch (next.kind) {
    case 'trip': {
      // Its bound cannot be trusted: under a strict cap the run stops, and every budget it shares.
      const spent = meter.trip(next.passed);
      return meter.tripped().then((): LLMOutcome => ({ kind: 'budget', spent, failures }));
    }
    case 'failed':
      return next;
    case 'response':
      if (next.warn !== undefined) {
        s.warned.unknownCost = true;
        safeLog(s.logger, 'warn', next.warn, { turn });
      }
      return { kind: 'response', response: value as LLMResponse, attempts: attempt, failures, notes: next.notes };
  }
}
