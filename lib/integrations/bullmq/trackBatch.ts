import * as fs from 'node:fs';
import type { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import {
  InvalidArgumentError,
  type BatchPause,
  type BatchProgress,
  type BudgetLimits,
  type SkipReason,
  type UsageTotals,
} from 'agent-state-machine';
import { abortChannel, recordKeys, type BatchKeys } from './batchKeys';
import { HELD_CODE, PAUSED_CODE, TIME_INDEX, USAGE_CODES, usageFromStrings, type StrictLimits } from './budgetFields';
import { moneyFields, moneyOf } from './takeoverCredit';
import { LIMITS } from '../../internal/limits';
import { bounded } from './connection';
import { describeSpent } from './RedisBudget';
import { raiseCap } from './raiseCap';
import { abortMessage, recordSkipped, skippedReport } from './runRecords';
import type { BatchHandle, DistributedBatchReport } from './BatchHandle';
import { pauseNotice } from './pauseNotice';
import { decideApproval } from './approvalRecords';
import { approvalNotice, type DistributedApprovalRequest } from './approvalNotice';
import { BatchTally, type BatchEvent } from './BatchTally';

/** What a handle on a batch needs: its connection (owned: closed when the report is out), its keys and settings. */
export interface TrackedBatch {
  redis: Redis;
  queue: Queue;
  prefix: string;
  name: string;
  batchId: string;
  keys: BatchKeys;
  ids: readonly string[];
  perRun: BudgetLimits | undefined;
  total: StrictLimits | undefined;
  timeoutMs: number;
  pollMs: number;
  /** Once the report is out, the batch's keys expire after this; undefined keeps them. */
  expireAfterMs: number | undefined;
  reportFile: string | undefined;
  signal: AbortSignal | undefined;
  onProgress: ((progress: BatchProgress) => void) | undefined;
  /** Called once per pause at the cap (`total.whenSpent: 'pause'`), with the figures and `raise`. */
  onPause?: ((pause: BatchPause) => void | Promise<void>) | undefined;
  /** Called for each run parked for approval, with its calls and `approve` / `deny`. */
  onApproval?: ((request: DistributedApprovalRequest) => void | Promise<void>) | undefined;
  /** Who the answers `onApproval` gives are from, as Redis keeps them (`onApproval of submitBatch (pid …)`). */
  answeredBy?: string;
}

/** How many runs one skip round trip records. */
const SKIP_CHUNK = 1000;

/**
 * The handle on a batch in Redis, for the producer that submitted it and for any process that
 * attaches to it: follows the events the workers push, skips what is left once a limit is
 * spent or the batch is aborted, and builds the report. Every Redis operation waits at most
 * `timeoutMs` for an unreachable Redis: `report()` then rejects naming the address and the wait.
 */
export function trackBatch(batch: TrackedBatch): {
  handle: BatchHandle;
  /**
   * Settles once the events already in Redis are read (or the tracking failed): from then on
   * `progress()` counts them. `attachBatch` waits for it, so a finished batch it attaches to
   * never reads `done 0`.
   */
  caughtUp: Promise<void>;
} {
  const { redis, queue, keys, batchId, ids, total, pollMs, signal } = batch;
  const within = <T>(what: string, operation: () => Promise<T>): Promise<T> =>
    bounded(redis, `batch ${batchId}: ${what}`, operation, batch.timeoutMs);
  const startedAt = Date.now();
  const count = ids.length;
  const tally = new BatchTally(ids, batch.onProgress);
  let offset = 0;
  let stopped: { reason: SkipReason; message: string } | undefined;
  let stopping: Promise<void> | undefined;
  /** The report is built (or the tracking failed): this handle's connection is closed, and it takes no answers. */
  let reported = false;

  /**
   * Records the runs not started skipped, a thousand per round trip. Their jobs stay queued
   * (removing them one by one costs BullMQ a scan of its wait list each): a worker that takes
   * one finds it reported and drops it. A run started meanwhile is its worker's to report.
   */
  const stopRest = async (reason: SkipReason, message: string): Promise<void> => {
    stopped ??= { reason, message };
    const rest = tally.notStarted();
    for (let from = 0; from < rest.length; from += SKIP_CHUNK) {
      const chunk = rest.slice(from, from + SKIP_CHUNK);
      await within('recording skipped runs', () =>
        recordSkipped(
          redis,
          keys,
          chunk.map((index) => ({ index, report: skippedReport(ids[index]!, reason, message) })),
        ),
      );
    }
  };

  const abort = async (reason?: unknown): Promise<void> => {
    const message = abortMessage(reason);
    if (stopped?.reason !== 'aborted') {
      stopped = { reason: 'aborted', message };
      await within('aborting', async () => {
        await redis.set(keys.abort, message, 'NX');
        await redis.publish(abortChannel(batch.prefix, batch.name), JSON.stringify({ batchId, message }));
      });
    }
    stopping = stopRest('aborted', message);
    await stopping;
  };
  const onAbort = (): void => void abort(signal?.reason).catch(() => undefined);
  if (signal?.aborted) onAbort();
  else signal?.addEventListener('abort', onAbort, { once: true });

  const { tellPause, tellApproval } = notices(batch, within, () => reported);
  let markCaughtUp: () => void = () => undefined;
  const caughtUp = new Promise<void>((resolve) => (markCaughtUp = resolve));
  const finished = (async (): Promise<DistributedBatchReport> => {
    try {
      while (tally.done < count) {
        const { events, spentField, usage, budgetExists, abortedBy, pause } = await readProgress(batch, offset, within);
        if (budgetExists === 0) {
          throw new Error(
            `batch ${batchId}: its keys are gone from Redis (${keys.budget}) with ${count - tally.done} of ${count} runs unreported — ` +
              'Redis restarted without persistence (appendonly), or the keys were evicted or deleted; the runs reported so far are lost with them',
          );
        }
        // Wall time is the batch's elapsed time, as this process saw it.
        tally.usage = usageFromStrings(
          usage.map((v, i) => (i !== TIME_INDEX ? v : String(Math.max(0, Date.now() - startedAt)))),
        );
        offset += events.length;
        for (const line of events) tally.apply(JSON.parse(line) as BatchEvent);
        // A request answered and gone on within the events read (a handle attached late) is not asked again.
        for (const open of tally.takeFresh()) tellApproval(open);
        tellPause({ pausedAt: pause[0]!, capUsd: pause[1]!, spentUsd: tally.usage.costUsd, heldUsd: pause[2]! });
        // A round shorter than its 1,000 events read all there was.
        if (events.length < 1000) markCaughtUp();
        // Aborted by another handle (attachBatch): it skips the rest; this one says so in its report.
        if (abortedBy !== null && stopped?.reason !== 'aborted') stopped = { reason: 'aborted', message: abortedBy };
        if (spentField !== null && stopped === undefined) {
          const spent = safeDescribe(tally.usage, total);
          stopping = stopRest('budget_exceeded', spent ?? `shared budget exceeded: ${spentField}`);
        }
        if (stopping !== undefined) await stopping;
        if (events.length === 0 && tally.done < count) await new Promise((resolve) => setTimeout(resolve, pollMs));
      }
      await restateTakenOver(batch, tally, startedAt, within);
      const report = tally.report({ batchId, perRun: batch.perRun, total, startedAt, stopped });
      await deliver(batch, report, within);
      return report;
    } finally {
      reported = true;
      markCaughtUp();
      signal?.removeEventListener('abort', onAbort);
      await Promise.race([queue.close().catch(() => undefined), new Promise((r) => setTimeout(r, 1000).unref())]);
      redis.disconnect();
    }
  })();
  // The caller may never ask for the report; its failure must not become an unhandled rejection.
  finished.catch(() => undefined);

  return {
    handle: {
      batchId,
      report: (options?: { signal?: AbortSignal }) => raceSignal(finished, options?.signal),
      abort,
      progress: () => tally.progress,
      raise: (limits) => raiseCap(batch, limits, 'handle', within),
    },
    caughtUp,
  };
}

type Within = <T>(what: string, operation: () => Promise<T>) => Promise<T>;

/** `onPause` and `onApproval` of a handle, told what they are to hear; what goes wrong with them is a process warning. */
function notices(
  batch: TrackedBatch,
  within: Within,
  isReported: () => boolean,
): { tellPause: ReturnType<typeof pauseNotice>; tellApproval: ReturnType<typeof approvalNotice> } {
  const { batchId } = batch;
  // The producer has no logger: what goes wrong with onPause is a process warning, never dropped.
  const tellPause = pauseNotice(
    batch.onPause,
    (limits) => raiseCap(batch, limits, 'handle', within),
    (message) => process.emitWarning(`batch ${batchId}: ${message}`),
  );
  // Answers go to Redis, for the run's worker; what goes wrong with onApproval is a process warning, as with onPause.
  const tellApproval = approvalNotice(
    batch.onApproval,
    (open, decision) =>
      isReported()
        ? Promise.reject(
            new InvalidArgumentError(
              'callId',
              `a call of a run still waiting (batch ${batchId} is reported: run ${open.id} has ended)`,
              decision.callId,
            ),
          )
        : decideApproval(
            { ...batch, index: open.index, requestId: open.requestId, taskId: open.id },
            { ...decision, ...(batch.answeredBy === undefined ? {} : { by: batch.answeredBy }), at: Date.now() },
            within,
          ).then(() => undefined),
    (message) => process.emitWarning(`batch ${batchId}: ${message}`),
  );
  return { tellPause, tellApproval };
}

/**
 * The batch's usage and the money of its runs taken over, read again at one moment (one
 * transaction): an earlier attempt of a run taken over may have charged since its report was
 * written, its charge taking the place of the run's credit in Redis (stepFence.ts). The report
 * then says that run's money as Redis counts it, and its totals add up to the budget it shows.
 */
async function restateTakenOver(
  batch: TrackedBatch,
  tally: BatchTally,
  startedAt: number,
  within: Within,
): Promise<void> {
  const runs = tally.takenOver();
  if (runs.length === 0) return;
  const { redis, keys } = batch;
  const [usage, ...money] = (await within('reading the money of the runs taken over', async () => {
    const multi = redis.multi().hmget(keys.budget, ...USAGE_CODES);
    for (const { index } of runs) multi.hmget(keys.runUsage, ...moneyFields(index));
    return (await multi.exec())!.map(([error, value]) => {
      if (error) throw error;
      return value as Array<string | null>;
    });
  })) as Array<Array<string | null>>;
  // The batch's keys went (their expiry, once every run was reported) since the last round: as read then.
  if (usage!.every((v) => v === null)) return;
  tally.usage = usageFromStrings(
    usage!.map((v, i) => (i !== TIME_INDEX ? v : String(Math.max(0, Date.now() - startedAt)))),
  );
  runs.forEach(({ index, attempt, how }, k) => tally.restate(index, moneyOf(money[k]!), attempt, how));
}

/** One round of a handle's reading: the next events, whether a limit is spent, the usage, the abort, the pause. */
async function readProgress(
  batch: TrackedBatch,
  offset: number,
  within: Within,
): Promise<{
  events: string[];
  spentField: string | null;
  usage: Array<string | null>;
  budgetExists: number;
  abortedBy: string | null;
  pause: Array<string | null>;
}> {
  const { redis, keys } = batch;
  const [events, spentField, usage, budgetExists, abortedBy, pause] = (await within('reading progress', async () =>
    (await redis
      .multi()
      .lrange(keys.events, offset, offset + 999)
      .hget(keys.budget, 'x')
      .hmget(keys.budget, ...USAGE_CODES)
      .exists(keys.budget)
      .get(keys.abort)
      .hmget(keys.budget, PAUSED_CODE, LIMITS.maxCostUsd.code, HELD_CODE)
      .exec())!.map(([error, value]) => {
      if (error) throw error;
      return value;
    }),
  )) as [string[], string | null, Array<string | null>, number, string | null, Array<string | null>];
  return { events, spentField, usage, budgetExists, abortedBy, pause };
}

/** Writes the report to `reportFile`, then gives the batch's keys their expiry: a report is never lost before it is read or kept. */
async function deliver(batch: TrackedBatch, report: DistributedBatchReport, within: Within): Promise<void> {
  if (batch.reportFile !== undefined) writeReport(batch.reportFile, report);
  if (batch.expireAfterMs !== undefined) {
    const ttl = batch.expireAfterMs;
    await within('setting the expiry of its keys', () =>
      recordKeys(batch.keys)
        .reduce((multi, key) => multi.pexpire(key, ttl), batch.redis.multi())
        .exec(),
    );
  }
}

/** The report as JSON in `file` (written whole, then renamed into place). */
function writeReport(file: string, report: DistributedBatchReport): void {
  const json = JSON.stringify(
    report,
    (_key, value: unknown) => (value instanceof Error ? { name: value.name, message: value.message } : value),
    2,
  );
  const tmp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, json);
  fs.renameSync(tmp, file);
}

/** The spent limit's message; a total no Budget takes (too large to check) is named instead of thrown. */
function safeDescribe(usage: UsageTotals, total: StrictLimits | undefined): string | undefined {
  try {
    return describeSpent(usage, total ?? {})?.message;
  } catch (error) {
    return `shared budget exceeded (its usage cannot be checked: ${(error as Error).message})`;
  }
}

function raceSignal<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (signal === undefined) return promise;
  if (signal.aborted) return Promise.reject(reasonOf(signal));
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(reasonOf(signal));
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

function reasonOf(signal: AbortSignal): Error {
  const reason: unknown = signal.reason;
  return reason instanceof Error ? reason : new Error(`aborted: ${String(reason)}`);
}
