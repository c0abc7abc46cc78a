// A taken-over run's money, as the batch's budget counts it. A takeover (or a write-off) charges
// the call holds of the attempt it takes the run over from as uncertain — the run's credit
// (`<index>:zc`, stepFence.ts) — since that attempt's calls may have left, or may still leave,
// and no answer of theirs will be read. The attempt that goes on reports the run with that
// credit in its uncertain money, and says why, so that the runs' reports add up to what Redis
// counts. A stale attempt's charge that lands before the report takes the credit's place there
// as it does in Redis; one that lands after it cannot change a report already written (see
// `docs/cap-guarantees.md`).
import type { Redis } from 'ioredis';
import type { UsageTotals } from 'agent-state-machine';
import type { AttemptSpend } from 'agent-state-machine/history';
import { IN_FLIGHT } from 'agent-state-machine/internal';
import { USAGE_FIELDS } from '../../internal/usageFields';
import type { BatchKeys } from './batchKeys';
import { CREDIT_CODE } from './budgetFields';

/**
 * A run's money in Redis (its `<index>:<code>` counters): every attempt's charges, its credit
 * among them, and its calls of unknown cost.
 */
export interface RunMoneyInRedis {
  /** Billed plus uncertain: what the batch's cap counts for this run. */
  readonly costUsd: number;
  /** Of `costUsd`, the uncertain part. */
  readonly uncertainUsd: number;
  /** Held and let go: provably not billed. */
  readonly releasedUsd: number;
  /** Of `uncertainUsd`, the takeover credit still counted (a stale attempt's charge takes its place). */
  readonly creditUsd: number;
  /** Calls of unknown cost, in no dollar figure (`UsageTotals.unpricedCalls`), over every attempt. */
  readonly unpricedCalls: number;
}

/** The run-usage fields of run `index`'s money, in the order `moneyOf` reads them. */
export function moneyFields(index: number): string[] {
  const codes = [
    USAGE_FIELDS.costUsd.code,
    USAGE_FIELDS.uncertainUsd.code,
    USAGE_FIELDS.releasedUsd.code,
    CREDIT_CODE,
    USAGE_FIELDS.unpricedCalls.code,
  ];
  return codes.map((code) => `${index}:${code}`);
}

/** A run's money from the values of its `moneyFields`. */
export function moneyOf(values: ReadonlyArray<string | null>): RunMoneyInRedis {
  const [cost, uncertain, released, credit] = [0, 1, 2, 3].map((k) => round(Number(values[k] ?? 0)));
  const unpriced = Number(values[4] ?? 0);
  return {
    costUsd: cost!,
    uncertainUsd: uncertain!,
    releasedUsd: released!,
    creditUsd: credit!,
    unpricedCalls: Number.isSafeInteger(unpriced) && unpriced > 0 ? unpriced : 0,
  };
}

/** Reads run `index`'s dollars from the batch's run-usage hash: one round trip. */
export async function runMoneyInRedis(redis: Redis, keys: BatchKeys, index: number): Promise<RunMoneyInRedis> {
  return moneyOf(await redis.hmget(keys.runUsage, ...moneyFields(index)));
}

/**
 * Why a credit is uncertain, as a report says it: the attempts before `attempt` taken over (or,
 * for a run reported lost, written off).
 */
export function takeoverReason(attempt: number, how: 'taken over' | 'written off' = 'taken over'): string {
  const earlier = attempt - 1;
  return earlier <= 1
    ? `${how}: attempt 1's call held at its worst case, its charge never reached the batch's budget`
    : `${how}: calls of attempts 1–${earlier} held at their worst case, their charges never reached the batch's budget`;
}

/**
 * `usage` with the money Redis counts for its run (`money`): billed, uncertain and released
 * over every attempt, the credit among the uncertain, and the calls of unknown cost (an
 * earlier attempt's among them, which no record of this attempt has). Tokens and calls stay as
 * the run counted them.
 */
export function withRedisMoney(usage: UsageTotals, money: RunMoneyInRedis): UsageTotals {
  return {
    ...usage,
    costUsd: money.costUsd,
    uncertainUsd: money.uncertainUsd,
    releasedUsd: money.releasedUsd,
    // The most either counts: a last charge that never reached Redis is in the run's count alone.
    unpricedCalls: Math.max(usage.unpricedCalls, money.unpricedCalls),
  };
}

/** Why part of a run's money is uncertain: each reason and how many calls it covers. */
type Reasons = ReadonlyArray<{ readonly why: string; readonly calls: number }>;

/**
 * The report of attempt `attempt` (after 1) of a run — or of a run written off, `how` says —
 * its dollars as Redis counts them for the run (`withRedisMoney`), and the credit still counted
 * among its reasons for uncertain money (a reason of an earlier reading replaced).
 */
export function reportWithCredit<R extends { usage: UsageTotals; uncertain?: Reasons | undefined }>(
  report: R,
  money: RunMoneyInRedis,
  attempt: number,
  how: 'taken over' | 'written off' = 'taken over',
): R {
  const credit = (report.uncertain ?? []).filter((r) => CREDIT_REASON.test(r.why));
  const others = (report.uncertain ?? []).filter((r) => !CREDIT_REASON.test(r.why));
  // At most one call a takeover (a run's loop has one LLM call in flight at a time): one, or as
  // many as its reasons named as the credit's (`lessCredited`).
  const calls = Math.max(1, ...credit.map((r) => r.calls));
  const uncertain = money.creditUsd > 0 ? [{ why: takeoverReason(attempt, how), calls }, ...others] : others;
  const { uncertain: _replaced, ...rest } = report;
  return {
    ...rest,
    usage: withRedisMoney(report.usage, money),
    ...(uncertain.length === 0 ? {} : { uncertain }),
  } as R;
}

/**
 * Why a taken-over run's money is uncertain over its attempts (`reasons`, of attempts `lost`,
 * the oldest first, each lost and taken over), with the calls the takeovers' credit charges
 * again (`money.creditUsd`) named by the credit's reason (`takeoverReason(attempt)`) rather than
 * their own: each lost attempt's call in flight (its hold still in Redis when it was taken
 * over), and the last call of the newest, when `newestCredited` says its uncertain charge never
 * reached Redis (kept for its next call). Each call once. Pure.
 */
export function lessCredited(
  reasons: Reasons,
  lost: readonly AttemptSpend[],
  money: RunMoneyInRedis,
  newestCredited: boolean,
  attempt: number,
): Reasons {
  if (money.creditUsd <= 0) return reasons;
  const calls = new Map(reasons.map((r) => [r.why, r.calls]));
  let credited = 0;
  const take = (why: string | undefined): void => {
    const left = why === undefined ? 0 : (calls.get(why) ?? 0);
    if (left <= 0) return;
    calls.set(why!, left - 1);
    credited += 1;
  };
  for (const [i, a] of lost.entries()) {
    const why = a.lastCallUncertainWhy;
    if (why === IN_FLIGHT_HELD || (i === lost.length - 1 && newestCredited)) take(why);
  }
  const left = reasons.flatMap((r) => {
    const n = calls.get(r.why)!;
    return n > 0 ? [{ why: r.why, calls: n }] : [];
  });
  return credited === 0 ? left : [{ why: takeoverReason(attempt), calls: credited }, ...left];
}

/** Why an attempt's file says a call was in flight, its hold taken. */
const IN_FLIGHT_HELD: string = IN_FLIGHT.held;

/** A reason `takeoverReason` gave. */
const CREDIT_REASON = /^(taken over|written off): .* held at (its|their) worst case/;

/** Dollars rounded to 1e-10, as usage totals round them (Redis adds floats). */
function round(usd: number): number {
  return Number.isFinite(usd) ? Math.round(usd * 1e10) / 1e10 : 0;
}
