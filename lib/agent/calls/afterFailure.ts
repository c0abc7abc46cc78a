import { failureMessage } from '../../internal/failureMessage';
import type { Usage } from '../AgentLoop';
import type { BoundExceeded } from '../boundExceeded';
import type { AttemptCharge } from '../money/chargeRule';
import { cutAtBoundOf, type CutAtBound } from '../money/cutAtBound';
import type { RetryPlan } from '../retry/planRetry';
import { journalError, type AttemptEndLine } from '../journal/JournalEntry';
import type { Attempt } from '../turn/LLMOutcome';
import { chargeFields } from './endAttempt';

/** Whether a failed attempt is tried again: the adapter's plan (`planRetry`), or, for a mirror, what the framework said. */
export type NextTry =
  | RetryPlan
  /** The framework may try again and said nothing of when: the call stays open until it does or the run ends. */
  | { kind: 'maybe' };

/** What follows a failed attempt, the same for both drivers. */
export interface FailedAttempt {
  /** The failure as the call's record keeps it. */
  failure: Attempt;
  /** The attempt's journal (or ledger) line: its error, what it was charged, and a cut at its bound. */
  line: AttemptEndLine;
  /** A stream cut at its bound: never tried again (the server would ignore the bound again). */
  cut: CutAtBound | undefined;
  /** Whether and when it is tried again; undefined after a cut, as nothing was planned. */
  next: NextTry | undefined;
  /** The call ends with this failure: cut, out of retries, refused, or the plan failed. */
  ends: boolean;
}

/**
 * The decision after a failed attempt is charged (issue 50, item 5: one transition, pure but for
 * `plan`, asked only when the stream was not cut, as it may draw a random jitter): its failure
 * record, its journal line, and whether the call goes on.
 */
export function afterFailure(
  attempt: number,
  error: unknown,
  charge: AttemptCharge,
  plan: () => NextTry,
  answered?: { usage: Usage | undefined; passed: BoundExceeded | undefined },
): FailedAttempt {
  const failure: Attempt = { attempt, error: failureMessage(error) };
  const line = failureLine(error, charge, answered?.usage, answered?.passed);
  const cut = line.cutAtBound;
  if (cut !== undefined) {
    failure.noRetry = 'the response stream was cut at its bound';
    return { failure, line, cut, next: undefined, ends: true };
  }
  const next = plan();
  if (next.kind === 'refused') failure.noRetry = next.why;
  if ((next.kind === 'wait' || next.kind === 'refused') && next.retryAfterMs !== undefined)
    failure.retryAfterMs = next.retryAfterMs;
  if (next.kind === 'wait') failure.delayMs = next.ms;
  return { failure, line, cut, next, ends: next.kind !== 'wait' && next.kind !== 'maybe' };
}

/**
 * A failed (or abandoned) attempt's journal line: its error, what it was charged, a cut at its
 * bound, and the usage of an answer the loop refused (`chargeFailure`), with its bound passed.
 */
export function failureLine(
  error: unknown,
  charge: AttemptCharge,
  usage?: Usage,
  passed?: BoundExceeded,
): AttemptEndLine {
  const cut = cutAtBoundOf(error);
  return {
    error: journalError(error),
    ...(usage && { usage }),
    ...chargeFields(charge),
    ...(passed && { boundExceeded: passed }),
    ...(cut && { cutAtBound: cut }),
  };
}
