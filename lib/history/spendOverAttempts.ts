import { mergeUncertain, type UncertainReasons } from '../internal/formatSpend';

/**
 * What one attempt of a run spent, as its file alone tells it, the parts apart: a run resumed
 * after a crash is several attempts (`<file>.interrupted`, `.interrupted.2`, …, then its file),
 * and only together do they say what the run spent.
 */
export interface AttemptSpend {
  /** USD the attempt's records carry: an attempt that resumed an earlier one counts that one's spend in them. */
  readonly recordedUsd: number;
  /**
   * USD of the requests this attempt made, by its ledger's `llm` lines: the lines served from an
   * earlier attempt's journal (`fromJournal`) left out, as that attempt paid for them.
   */
  readonly liveUsd: number;
  /** USD its reservations with no `llm` line after them hold (uncertain: the provider may have billed them), at their worst case. */
  readonly heldUsd: number;
  /** Of `recordedUsd`, the uncertain part: charged at holds (`uncertainUsd` of its running totals). */
  readonly recordedUncertainUsd: number;
  /** Of `liveUsd`, the uncertain part: its requests charged at their hold (`chargedAtHold`). */
  readonly liveUncertainUsd: number;
  /** USD of holds let go (provably not billed) its records carry (`releasedUsd`): with those of the attempts it resumed. */
  readonly recordedReleasedUsd: number;
  /** USD of holds it let go itself, by its ledger's `llm` lines (`releasedUsd`), those served from a journal left out. */
  readonly liveReleasedUsd: number;
  /** LLM calls of unknown cost its records carry (`unpricedCalls`): with those of the attempts it resumed. */
  readonly recordedUnpricedCalls: number;
  /** LLM calls of unknown cost it made itself, by its ledger's `llm` lines (`unpriced`), those served from a journal (`fromJournal`) left out. */
  readonly liveUnpricedCalls: number;
  /** Its reservations with no amount and no `llm` line after them: each may have been billed, at a cost nobody knows. */
  readonly openUnpricedCalls: number;
  /** Why its own money is uncertain (its requests charged at their hold, its open reservations), most calls first. */
  readonly uncertainWhy: UncertainReasons;
  /** Why its own calls are of unknown cost (served lines left out, its open reservations with no amount), most calls first. */
  readonly unpricedWhy: UncertainReasons;
  /**
   * Why the money of the last call it made itself is uncertain (one of `uncertainWhy`: charged at
   * its hold, or in flight when its file ended), if it is; undefined when that call was billed or
   * it made none. A distributed run taken over charges that call's hold again, as its credit.
   */
  readonly lastCallUncertainWhy?: string | undefined;
  /** The file holds ledger lines (`reserve`). */
  readonly ledger: boolean;
}

/**
 * What a run spent over all its attempts, the oldest first, by the ledger's rule. Each attempt
 * adds the requests it made (priced) and the reservations it left without an answer (at their
 * worst case) to what the attempts before it spent; its records, which carry the spend it was
 * resumed with, bound it from below. So every unanswered reservation of every attempt counts
 * once, however many crashes, and a response served again from a journal counts only where it
 * was paid for. Attempts without a ledger count what their records say. Pure.
 */
export function spendOverAttempts(attempts: readonly AttemptSpend[]): number {
  let spent = 0;
  for (const attempt of attempts) {
    const made = attempt.ledger ? attempt.liveUsd + attempt.heldUsd : 0;
    spent = Math.max(attempt.recordedUsd, roundUsd(spent + made));
  }
  return spent;
}

/**
 * Of `spendOverAttempts`, the uncertain part, added up the same way: each attempt's requests
 * charged at their hold and the reservations it left without an answer, bounded from below by
 * what its records carry. Billed is the rest. Pure.
 */
export function uncertainOverAttempts(attempts: readonly AttemptSpend[]): number {
  let uncertain = 0;
  for (const attempt of attempts) {
    const made = attempt.ledger ? attempt.liveUncertainUsd + attempt.heldUsd : 0;
    uncertain = Math.max(attempt.recordedUncertainUsd, roundUsd(uncertain + made));
  }
  return uncertain;
}

/**
 * The USD of holds a run let go over all its attempts, added up the same way: each attempt's own
 * releases, bounded from below by what its records carry. So an attempt cut after a release and
 * before a record said so still counts it, and none counts twice. Pure.
 */
export function releasedOverAttempts(attempts: readonly AttemptSpend[]): number {
  let released = 0;
  for (const attempt of attempts) {
    const made = attempt.ledger ? attempt.liveReleasedUsd : 0;
    released = Math.max(attempt.recordedReleasedUsd, roundUsd(released + made));
  }
  return released;
}

/**
 * The LLM calls of unknown cost of a run over all its attempts, added up the same way: each
 * attempt's own calls of unknown cost and its reservations without an amount or an answer,
 * bounded from below by what its records carry. So a call counts once, however many crashes,
 * and an attempt cut before its records still counts its own. Pure.
 */
export function unpricedOverAttempts(attempts: readonly AttemptSpend[]): number {
  let calls = 0;
  for (const attempt of attempts) {
    const made = attempt.ledger ? attempt.liveUnpricedCalls + attempt.openUnpricedCalls : 0;
    calls = Math.max(attempt.recordedUnpricedCalls, calls + made);
  }
  return calls;
}

/**
 * The reasons of a run over all its attempts: each attempt's own calls (`own`, one list an
 * attempt) added up, each reason bounded from below by what the live file says (`live`, which
 * holds the calls served from earlier journals too). So the reasons cover the calls that
 * `uncertainOverAttempts` and `unpricedOverAttempts` count, each call once. Pure.
 */
export function reasonsOverAttempts(
  live: UncertainReasons,
  own: readonly UncertainReasons[],
): Array<{ why: string; calls: number }> {
  const calls = new Map(mergeUncertain(own).map(({ why, calls: n }) => [why, n]));
  for (const { why, calls: n } of live) calls.set(why, Math.max(calls.get(why) ?? 0, n));
  return [...calls].map(([why, n]) => ({ why, calls: n })).sort((a, b) => b.calls - a.calls);
}

/** USD rounded to 1e-10, as the ledger's sums are: binary fractions of cents do not pile up. */
function roundUsd(usd: number): number {
  return Math.round(usd * 1e10) / 1e10;
}
