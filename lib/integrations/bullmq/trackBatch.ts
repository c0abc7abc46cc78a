import * as fs from 'node:fs';
import type { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { addUsage, emptyUsage } from 'agent-state-machine/internal';
import {
  InvalidArgumentError,
  type BatchPause,
  type BatchProgress,
  type BudgetLimits,
  type CapRaise,
  type RunOutcome,
  type SkipReason,
  type UsageTotals,
} from 'agent-state-machine';
import { abortChannel, recordKeys, type BatchKeys } from './batchKeys';
import { HELD_CODE, PAUSED_CODE, TIME_INDEX, USAGE_CODES, usageFromStrings, type StrictLimits } from './budgetFields';
import { LIMITS } from '../../internal/limits';
import { bounded } from './connection';
import { describeSpent } from './RedisBudget';
import { raiseCap } from './raiseCap';
import { abortMessage, recordSkipped, skippedReport } from './runRecords';
import type { BatchHandle, DistributedBatchReport, DistributedRunReport } from './BatchHandle';
import { errorFromWire, type WireRunReport } from './wireReport';
import type { ParkEvent } from './parkEvents';
import { pauseNotice } from './pauseNotice';
import { decideApproval, type ApprovalEvent } from './approvalRecords';
import { approvalNotice, type DistributedApprovalRequest, type OpenRequest } from './approvalNotice';

type Event =
  | ParkEvent
  | ApprovalEvent
  | { t: 's'; i: number; w: string; a: number; c: number }
  | { t: 'f'; i: number; r: WireRunReport }
  | { t: 'r'; at: number; f: number; to: number; by: CapRaise['by'] };

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
  const { redis, queue, keys, batchId, ids, perRun, total, timeoutMs, pollMs, signal, onProgress } = batch;
  const within = <T>(what: string, operation: () => Promise<T>): Promise<T> =>
    bounded(redis, `batch ${batchId}: ${what}`, operation, timeoutMs);
  const startedAt = Date.now();
  const count = ids.length;
  const runs: Array<DistributedRunReport | undefined> = new Array(count);
  const outcomes: Record<RunOutcome, number> = {
    end_of_turn: 0,
    wrapped_up: 0,
    budget_exceeded: 0,
    stalled: 0,
    error: 0,
    cancelled: 0,
    skipped: 0,
  };
  const running = new Set<number>();
  /** Runs parked at the paused cap: started, not ended, holding no slot (not in flight). */
  const parked = new Set<number>();
  /** The open approval request of each run parked for approval. */
  const asking = new Map<number, OpenRequest>();
  /** Requests read in this round of events: `onApproval` hears of those still open once the round is applied. */
  let fresh: OpenRequest[] = [];
  const workers: Record<string, { concurrency: number; runs: number }> = {};
  const raises: CapRaise[] = [];
  let done = 0;
  let offset = 0;
  let budget: UsageTotals = emptyUsage();
  let stopped: { reason: SkipReason; message: string } | undefined;
  let stopping: Promise<void> | undefined;
  /** The report is built (or the tracking failed): this handle's connection is closed, and it takes no answers. */
  let reported = false;

  const snapshot = (event: BatchProgress['event']): BatchProgress => ({
    done,
    total: count,
    running: running.size,
    outcomes: { ...outcomes },
    usage: { ...budget },
    event,
  });
  let last: BatchProgress = snapshot({ type: 'skipped', count: 0, reason: 'aborted', message: 'not started yet' });
  const emit = (event: BatchProgress['event']): void => {
    last = snapshot(event);
    if (onProgress === undefined) return;
    try {
      const returned: unknown = onProgress(last);
      if (returned instanceof Promise) returned.catch(() => undefined);
    } catch {
      // A failing progress callback must not stop the batch.
    }
  };

  /**
   * Records the runs not started skipped, a thousand per round trip. Their jobs stay queued
   * (removing them one by one costs BullMQ a scan of its wait list each): a worker that takes
   * one finds it reported and drops it. A run started meanwhile is its worker's to report.
   */
  const stopRest = async (reason: SkipReason, message: string): Promise<void> => {
    stopped ??= { reason, message };
    const rest: number[] = [];
    for (let i = 0; i < count; i++) if (runs[i] === undefined && !running.has(i) && !parked.has(i)) rest.push(i);
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

  const apply = (event: Event): void => {
    if (event.t === 'r') {
      raises.push({ at: event.at, fromUsd: event.f, toUsd: event.to, by: event.by });
      return;
    }
    if (event.t === 'a') {
      if (runs[event.i] !== undefined) return;
      running.delete(event.i);
      parked.add(event.i);
      const open: OpenRequest = { index: event.i, id: ids[event.i]!, requestId: event.r, calls: event.c };
      asking.set(event.i, open);
      fresh.push(open);
      emit({ type: 'parked', index: event.i, id: open.id, calls: open.calls.length });
      return;
    }
    if (event.t === 'p') {
      if (runs[event.i] !== undefined || !(event.p === 1 ? running : parked).has(event.i)) return;
      (event.p === 1 ? running : parked).delete(event.i);
      (event.p === 1 ? parked : running).add(event.i);
      const id = ids[event.i]!;
      const asked = asking.get(event.i);
      asking.delete(event.i);
      if (asked !== undefined) emit({ type: 'resumed', index: event.i, id, calls: asked.calls.length });
      else emit({ type: event.p === 1 ? 'parked' : 'resumed', index: event.i, id, calls: 0, atCap: true });
      return;
    }
    if (event.t === 's') {
      if (runs[event.i] !== undefined) return;
      running.add(event.i);
      workers[event.w] ??= { concurrency: event.c, runs: 0 };
      emit({ type: 'started', index: event.i, id: ids[event.i]! });
      return;
    }
    if (runs[event.i] !== undefined) return;
    const run = fromWire(event.r);
    runs[event.i] = run;
    running.delete(event.i);
    parked.delete(event.i);
    asking.delete(event.i);
    done += 1;
    outcomes[run.outcome] += 1;
    if (run.worker !== undefined) (workers[run.worker] ??= { concurrency: 0, runs: 0 }).runs += 1;
    if (run.outcome === 'skipped') {
      const skip = run.error as { reason?: SkipReason } | undefined;
      emit({ type: 'skipped', count: 1, reason: skip?.reason ?? 'aborted', message: run.error?.message ?? 'skipped' });
    } else emit({ type: 'finished', index: event.i, run });
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
      reported
        ? Promise.reject(
            new InvalidArgumentError(
              'callId',
              `a call of a run still waiting (batch ${batchId} is reported: run ${open.id} has ended)`,
              decision.callId,
            ),
          )
        : decideApproval({ ...batch, index: open.index, requestId: open.requestId, taskId: open.id }, decision, within),
    (message) => process.emitWarning(`batch ${batchId}: ${message}`),
  );
  let markCaughtUp: () => void = () => undefined;
  const caughtUp = new Promise<void>((resolve) => (markCaughtUp = resolve));
  const finished = (async (): Promise<DistributedBatchReport> => {
    let report: DistributedBatchReport | undefined;
    try {
      while (done < count) {
        const [events, spentField, usage, budgetExists, abortedBy, pause] = (await within(
          'reading progress',
          async () =>
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
        if (budgetExists === 0) {
          throw new Error(
            `batch ${batchId}: its keys are gone from Redis (${keys.budget}) with ${count - done} of ${count} runs unreported — ` +
              'Redis restarted without persistence (appendonly), or the keys were evicted or deleted; the runs reported so far are lost with them',
          );
        }
        // Wall time is the batch's elapsed time, as this process saw it.
        budget = usageFromStrings(
          usage.map((v, i) => (i !== TIME_INDEX ? v : String(Math.max(0, Date.now() - startedAt)))),
        );
        offset += events.length;
        for (const line of events) apply(JSON.parse(line) as Event);
        // A request answered and gone on within the events read (a handle attached late) is not asked again.
        const asked = fresh;
        fresh = [];
        for (const open of asked) if (asking.get(open.index) === open) tellApproval(open);
        tellPause({ pausedAt: pause[0]!, capUsd: pause[1]!, spentUsd: budget.costUsd, heldUsd: pause[2]! });
        // A round shorter than its 1,000 events read all there was.
        if (events.length < 1000) markCaughtUp();
        // Aborted by another handle (attachBatch): it skips the rest; this one says so in its report.
        if (abortedBy !== null && stopped?.reason !== 'aborted') stopped = { reason: 'aborted', message: abortedBy };
        if (spentField !== null && stopped === undefined) {
          const spent = safeDescribe(budget, total);
          stopping = stopRest('budget_exceeded', spent ?? `shared budget exceeded: ${spentField}`);
        }
        if (stopping !== undefined) await stopping;
        if (events.length === 0 && done < count) await new Promise((resolve) => setTimeout(resolve, pollMs));
      }
      const totals = runs.reduce<UsageTotals>((sum, run) => addUsage(sum, run!.usage), emptyUsage());
      report = {
        runs: runs as DistributedRunReport[],
        totals: { ...totals, outcomes: { ...outcomes } },
        limits: {
          ...(perRun === undefined ? {} : { perRun: { ...perRun } }),
          ...(total === undefined ? {} : { total: { ...total } }),
        },
        concurrency: Object.values(workers).reduce((sum, w) => sum + w.concurrency, 0),
        ...(total?.whenSpent === 'pause' ? { raises: raises.map((r) => ({ ...r })) } : {}),
        durationMs: Date.now() - startedAt,
        ...(stopped === undefined || outcomes.skipped === 0 ? {} : { stopped }),
        batchId,
        budget: { ...budget, wallMs: Date.now() - startedAt },
        workers,
      };
      // Written before the keys are given an expiry: a report is never lost before it is read or kept.
      if (batch.reportFile !== undefined) writeReport(batch.reportFile, report);
      if (batch.expireAfterMs !== undefined) {
        const ttl = batch.expireAfterMs;
        await within('setting the expiry of its keys', () =>
          recordKeys(keys)
            .reduce((multi, key) => multi.pexpire(key, ttl), redis.multi())
            .exec(),
        );
      }
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
      progress: () => last,
      raise: (limits) => raiseCap(batch, limits, 'handle', within),
    },
    caughtUp,
  };
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

function fromWire(wire: WireRunReport): DistributedRunReport {
  const { error, historyError, ...rest } = wire;
  return {
    ...rest,
    ...(error === undefined ? {} : { error: errorFromWire(error) }),
    ...(historyError === undefined ? {} : { historyError: errorFromWire(historyError) }),
  };
}
