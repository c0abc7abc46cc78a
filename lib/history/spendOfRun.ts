import type { UncertainReasons } from '../internal/formatSpend';
import {
  reasonsOverAttempts,
  spendOverAttempts,
  uncertainOverAttempts,
  unpricedOverAttempts,
  type AttemptSpend,
} from './spendOverAttempts';

/** A run's money, the three figures apart, as every reader of a batch says it. */
export interface RunMoney {
  /** USD charged: billed plus uncertain (what caps count). */
  readonly costUsd: number;
  /** Of `costUsd`, what may have been billed but reported no usage, at its worst case. */
  readonly uncertainUsd: number;
  /** Holds let go, provably not billed. */
  readonly releasedUsd: number;
  /** Why money is uncertain, most calls first, over all its attempts. */
  readonly uncertain: UncertainReasons;
  /** LLM calls of unknown cost (no price, no hold): in none of the dollars, never taken for $0. */
  readonly unpricedCalls: number;
  /** Why their cost is unknown, most calls first, over all its attempts. */
  readonly unpriced: UncertainReasons;
}

/** The money of a run that spent none (not started, unreadable, or still running): every figure 0. */
export const NO_MONEY: RunMoney = Object.freeze({
  costUsd: 0,
  uncertainUsd: 0,
  releasedUsd: 0,
  uncertain: [],
  unpricedCalls: 0,
  unpriced: [],
});

/**
 * What a run spent by the ledger's rule over every attempt: its live file's spend (`live`, its
 * `RunSpend`), bound from below by what the attempts a resume set aside (`earlier`, the oldest
 * first) and the live one (`attempt`) add up to (`spendOverAttempts`), each call counted once.
 * The one rule `inspect` (`readBatchFolder`) and `watch` (`WatchState`) both count by. Pure.
 */
export function spendOfRun(live: RunMoney, attempt: AttemptSpend, earlier: readonly AttemptSpend[]): RunMoney {
  const attempts = [...earlier, attempt];
  const costUsd = Math.max(live.costUsd, spendOverAttempts(attempts));
  const uncertainUsd = Math.min(costUsd, Math.max(live.uncertainUsd, uncertainOverAttempts(attempts)));
  // A resumed run's live totals count the calls it was served from the journal: its earlier attempts' too.
  return {
    costUsd,
    uncertainUsd,
    // Its live records carry the releases it went on from: a distributed run taken over counts a
    // release its lost attempt kept from Redis among its uncertain money (the takeover's credit).
    releasedUsd: live.releasedUsd,
    uncertain: reasonsOverAttempts(
      live.uncertain,
      attempts.map((a) => a.uncertainWhy),
    ),
    unpricedCalls: Math.max(live.unpricedCalls, unpricedOverAttempts(attempts)),
    unpriced: reasonsOverAttempts(
      live.unpriced,
      attempts.map((a) => a.unpricedWhy),
    ),
  };
}
