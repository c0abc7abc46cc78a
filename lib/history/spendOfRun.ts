import type { UncertainReasons } from '../internal/formatSpend';
import { spendOverAttempts, uncertainOverAttempts, type AttemptSpend } from './spendOverAttempts';

/** A run's money, the three figures apart, as every reader of a batch says it. */
export interface RunMoney {
  /** USD charged: billed plus uncertain (what caps count). */
  readonly costUsd: number;
  /** Of `costUsd`, what may have been billed but reported no usage, at its worst case. */
  readonly uncertainUsd: number;
  /** Holds let go, provably not billed. */
  readonly releasedUsd: number;
  /** Why money is uncertain, most calls first (its live attempt's reasons). */
  readonly uncertain: UncertainReasons;
}

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
  return { costUsd, uncertainUsd, releasedUsd: live.releasedUsd, uncertain: live.uncertain };
}
