import type { Redis } from 'ioredis';
import { emptyUsage } from 'agent-state-machine/internal';
import { RunSkippedError, type BudgetLimits, type RetryOptions, type SkipReason } from 'agent-state-machine';
import { recordKeys, type BatchKeys } from './batchKeys';
import { USAGE_CODES, usageFromStrings, type StrictLimits } from './budgetFields';
import type { PriceTable } from './PriceTable';
import { runScript } from './redisScripts';
import { errorToWire, type WireRunReport } from './wireReport';
import { messageOf } from '../../internal/messageOf';
import { WorkerLostError } from './WorkerLostError';
import { reportWithCredit, runMoneyInRedis } from './takeoverCredit';

/** The settings a batch's workers read from Redis. */
export interface BatchMeta {
  v: 1;
  count: number;
  /** A digest of the tasks (ids, inputs, payloads): a producer restarted with the same batch id must bring the same tasks. */
  tasks?: string;
  perRun?: BudgetLimits;
  total?: StrictLimits;
  retry?: RetryOptions;
  pricing?: PriceTable;
  retryLostRuns: number;
  cancelGraceMs: number;
  /** The batch's approval policy (`submitBatch({ approve })`): every worker runs the batch's tasks under it. */
  approve?: Readonly<Record<string, boolean>>;
  approvalTimeoutMs?: number;
}

/**
 * A batch's settings as kept in Redis. A batch submitted before `wrapUp.reserveUsd` became
 * `wrapUp.finalCallUsd` is read in the new spelling, so a new worker holds the same final call.
 */
export function parseBatchMeta(json: string): BatchMeta {
  const meta = JSON.parse(json) as BatchMeta;
  const renamed = (limits: { wrapUp?: unknown } | undefined): void => {
    const wrap = limits?.wrapUp as Record<string, unknown> | undefined;
    if (typeof wrap !== 'object' || wrap === null || !('reserveUsd' in wrap)) return;
    const { reserveUsd, ...rest } = wrap;
    limits!.wrapUp = { ...rest, finalCallUsd: reserveUsd };
  };
  renamed(meta.perRun);
  renamed(meta.total);
  return meta;
}

/**
 * Writes a run's report once: 1 when it is the one that counts, 0 when another was first, -1
 * when the batch is gone from Redis (nothing is written), -2 when the attempt that ran it was
 * taken over (a later attempt began: it reports the run).
 */
export async function record(
  redis: Redis,
  keys: BatchKeys,
  index: number,
  report: WireRunReport,
): Promise<1 | 0 | -1 | -2> {
  const json = JSON.stringify(report);
  const event = `{"t":"f","i":${index},"r":${json}}`;
  const args = [index, json, event, ...(report.attempt === undefined ? [] : [report.attempt])];
  return (await runScript(redis, 'asmRecord', recordKeys(keys), args)) as 1 | 0 | -1 | -2;
}

/**
 * A worker's writing of a run's report (`record`, within the worker's Redis wait): says through
 * `onError` when it is not the one that counts (the batch gone, or another report first), and
 * throws when it cannot be written.
 */
export async function recordOnce(
  redis: Redis,
  within: <T>(what: string, operation: () => Promise<T>) => Promise<T>,
  onError: (error: Error) => void,
  run: { keys: BatchKeys; batchId: string; index: number; report: WireRunReport },
): Promise<void> {
  const { keys, batchId, index, report } = run;
  let counted: 1 | 0 | -1 | -2;
  try {
    counted = await within(`recording run ${report.id} of batch ${batchId}`, () => record(redis, keys, index, report));
  } catch (error) {
    onError(
      new Error(
        `run ${report.id} of batch ${batchId} (${report.outcome}): its report is not written: ${messageOf(error)}`,
      ),
    );
    // The job fails and BullMQ gives it back later (submitBatch's jobs retry): `begin` then finds
    // the run started and not reported, and has it reported lost with what it charged — never run twice.
    throw error;
  }
  if (counted === -1)
    onError(
      new Error(
        `run ${report.id} of batch ${batchId}: the batch is gone from Redis (${keys.budget}); its report is dropped`,
      ),
    );
  else if (counted === -2)
    onError(
      new Error(
        `run ${report.id} of batch ${batchId}: attempt ${report.attempt} was taken over by a later attempt (its job lock expired while its worker lived on); this result is dropped, the later attempt reports the run`,
      ),
    );
  // A skip the producer recorded first (it skips in bulk) is the same report: nothing to say.
  else if (counted === 0 && report.outcome !== 'skipped')
    onError(
      new Error(
        `run ${report.id} of batch ${batchId} was already reported (its lock lapsed and it was reported lost); this result is dropped`,
      ),
    );
}

/**
 * Records runs skipped, many per round trip (those not started: a started run is its
 * worker's to report). Returns how many were recorded; throws when the batch is gone.
 */
export async function recordSkipped(
  redis: Redis,
  keys: BatchKeys,
  runs: ReadonlyArray<{ index: number; report: WireRunReport }>,
): Promise<number> {
  if (runs.length === 0) return 0;
  const args = runs.flatMap(({ index, report }) => [index, JSON.stringify(report)]);
  const recorded = (await runScript(redis, 'asmSkip', recordKeys(keys), args)) as number;
  if (recorded === -1)
    throw new Error(`the batch is gone from Redis (${keys.budget}): its skipped runs cannot be recorded`);
  return recorded;
}

export function skippedReport(id: string, reason: SkipReason, message: string, worker?: string): WireRunReport {
  return {
    id,
    outcome: 'skipped',
    usage: emptyUsage(),
    durationMs: 0,
    transitions: 0,
    error: errorToWire(new RunSkippedError(reason, message)),
    ...(worker === undefined ? {} : { worker }),
  };
}

/** A run that ended as an error before its agent ran (its folder or store refused it, an option it cannot honour). */
export function errorReport(id: string, error: Error, worker: string, attempt: number): WireRunReport {
  return {
    id,
    outcome: 'error',
    usage: emptyUsage(),
    durationMs: 0,
    transitions: 0,
    error: errorToWire(error),
    worker,
    attempt,
  };
}

/** A run started (by `start.w`, `start.a` times) and never reported: `error`, with what it had charged. */
export async function lostReport(
  redis: Redis,
  keys: BatchKeys,
  index: number,
  id: string,
  start: { w: string; a: number },
): Promise<WireRunReport> {
  // Per run, Redis keeps the counters only: the wall-time slot (`<index>:st`) is never written and reads 0.
  const counted = usageFromStrings(await redis.hmget(keys.runUsage, ...USAGE_CODES.map((code) => `${index}:${code}`)));
  // Its dollars as the batch counts them, the write-off's credit among the uncertain, with why.
  const money = await runMoneyInRedis(redis, keys, index);
  const { usage, uncertain } = reportWithCredit<Pick<WireRunReport, 'usage' | 'uncertain'>>(
    { usage: counted },
    money,
    start.a + 1,
    'written off',
  );
  return {
    id,
    outcome: 'error',
    usage,
    ...(uncertain === undefined ? {} : { uncertain }),
    durationMs: 0,
    transitions: 0,
    error: errorToWire(new WorkerLostError(start.w, start.a)),
    worker: start.w,
    attempt: start.a,
  };
}

export function abortMessage(reason: unknown): string {
  if (
    reason === undefined ||
    (typeof reason === 'object' && reason !== null && (reason as { name?: unknown }).name === 'AbortError')
  )
    return 'batch aborted';
  return `batch aborted: ${reason instanceof Error ? reason.message : String(reason)}`;
}
