import { randomUUID } from 'node:crypto';
import { Queue } from 'bullmq';
import {
  addUsage,
  assertBudgetLimits,
  emptyUsage,
  InvalidArgumentError,
  type BatchProgress,
  type BatchReport,
  type BudgetLimits,
  type RetryOptions,
  type RunOutcome,
  type RunReport,
  type SkipReason,
  type UsageTotals,
} from 'agent-state-machine';
import { allKeys, abortChannel, batchKeys } from './batchKeys';
import { assertQueueName, openRedis, type RedisConnection } from './connection';
import { assertPriceTable, type PriceTable } from './PriceTable';
import { limitFields, TIME_INDEX, USAGE_CODES, usageFromStrings } from './budgetFields';
import { describeSpent } from './RedisBudget';
import { abortMessage, lostReport, record, skippedReport, type BatchMeta } from './runRecords';
import { errorFromWire, type WireRunReport } from './wireReport';

/** One task of a distributed batch: data only (JSON), from which a worker builds the agent. */
export interface DistributedTask {
  /** Unique within the batch; names the run in the report and its history file. */
  id: string;
  /** The user message the run starts with. */
  input: string;
  /** Anything the worker's `agent` factory needs (a repository, a sandbox image): JSON. */
  payload?: unknown;
}

/** Options of `submitBatch(tasks, options)`. */
export interface SubmitBatchOptions {
  /** Redis: a URL, ioredis options or an ioredis client (duplicated, never closed). */
  connection: RedisConnection;
  /** The BullMQ queue the workers listen on (`startBatchWorker({ name })`). */
  name: string;
  /** BullMQ's key prefix. Default `bull`. */
  prefix?: string;
  /** Limits for each run on its own. */
  perRun?: BudgetLimits;
  /** Limits for the whole batch, in Redis, shared by every worker; `maxWallMs` is the batch's elapsed time. */
  total?: BudgetLimits;
  /** Retries of a failed LLM call, per run. */
  retry?: RetryOptions;
  /** Prices per model, used by every worker for responses that report no cost. */
  pricing?: PriceTable;
  /** How many times a run whose worker was lost is started again. Default 0: a re-run would spend twice. */
  retryLostRuns?: number;
  /** After an abort, how long a run's running operation may take to stop. Default 1,000 ms. */
  cancelGraceMs?: number;
  /** Aborting cancels the runs in flight on every worker and skips the rest; the report still comes back. */
  signal?: AbortSignal;
  /** Called as runs start and end and when runs are skipped. A throw is caught and ignored. */
  onProgress?: (progress: BatchProgress) => void;
  /** How often the producer reads what the workers reported. Default 100 ms. */
  pollMs?: number;
  /** Leave the batch's keys in Redis after the report (to look at them). Default false. */
  keepKeys?: boolean;
}

/** A run of a distributed batch: `RunReport` plus where it ran. */
export interface DistributedRunReport extends RunReport {
  /** The worker that ran it (or lost it, or skipped it); absent when the producer skipped it. */
  worker?: string;
  /** How many times it was started (more than 1 only with `retryLostRuns`). */
  attempt?: number;
}

/** What a distributed batch's `report()` resolves to: `BatchReport` with each run's worker, plus the shared budget as Redis counted it. */
export interface DistributedBatchReport extends BatchReport {
  runs: DistributedRunReport[];
  /** The batch's id: its keys in Redis and the folder of its history files. */
  batchId: string;
  /** Usage charged to the shared budget in Redis (lost runs' spend included); `wallMs` is the batch's elapsed time. */
  budget: UsageTotals;
  /** Each worker that ran a run, with its concurrency and how many runs it reported. */
  workers: Record<string, { concurrency: number; runs: number }>;
}

/** A submitted batch. */
export interface BatchHandle {
  readonly batchId: string;
  /** Resolves once every task is reported, exactly once each. */
  report(): Promise<DistributedBatchReport>;
  /** Cancels the runs in flight on every worker and skips those not started. Resolves once the workers have been told. */
  abort(reason?: unknown): Promise<void>;
  /** Where the batch is now. */
  progress(): BatchProgress;
}

type Event = { t: 's'; i: number; w: string; a: number; c: number } | { t: 'f'; i: number; r: WireRunReport };

/**
 * Puts a batch on a BullMQ queue for workers on any machine (`startBatchWorker`), with its
 * `total` limits in Redis as one budget for the whole cluster, and returns a handle whose
 * `report()` resolves with the same report `runBatch` gives — each run naming its worker.
 *
 * - Budget: every LLM call and tool call on every worker checks the shared budget first (one
 *   Redis round trip) and charges it as usage arrives (one more): spend passes a cap by at most
 *   one LLM response per run in flight in the cluster; call counts never pass theirs. Once a
 *   limit is spent, runs in flight end `budget_exceeded` and runs not started are `skipped`.
 * - Abort: the workers hear it at once (pub/sub); runs in flight are cancelled, the rest skipped.
 * - A worker that dies: its runs in flight are reported `error` (`WorkerLostError`) when
 *   BullMQ's stalled-job check on a live worker finds their lock gone — within the workers'
 *   `lockDurationMs + stalledIntervalMs` (30 s + 30 s by default), plus the wait for a free
 *   slot — and are not run again unless `retryLostRuns` allows it.
 * - Every task is reported exactly once: a run's report is written with HSETNX.
 */
export async function submitBatch(tasks: Iterable<DistributedTask>, options: SubmitBatchOptions): Promise<BatchHandle> {
  if (typeof options !== 'object' || options === null)
    throw new InvalidArgumentError('options', 'an object { connection, name, … }', options);
  const {
    connection,
    name,
    prefix = 'bull',
    perRun,
    total,
    retry,
    pricing,
    retryLostRuns = 0,
    cancelGraceMs = 1000,
    signal,
    onProgress,
    pollMs = 100,
    keepKeys = false,
  } = options;
  assertQueueName(name);
  const list = materialize(tasks);
  assertBudgetLimits(perRun, 'perRun');
  assertBudgetLimits(total, 'total');
  assertPriceTable(pricing);
  if (!(Number.isInteger(retryLostRuns) && retryLostRuns >= 0))
    throw new InvalidArgumentError('retryLostRuns', 'a non-negative integer', retryLostRuns);
  if (!(typeof cancelGraceMs === 'number' && Number.isFinite(cancelGraceMs) && cancelGraceMs >= 0))
    throw new InvalidArgumentError('cancelGraceMs', 'a non-negative number of milliseconds', cancelGraceMs);
  if (!(typeof pollMs === 'number' && Number.isFinite(pollMs) && pollMs > 0))
    throw new InvalidArgumentError('pollMs', 'a positive number of milliseconds', pollMs);
  if (signal !== undefined && !(signal instanceof AbortSignal))
    throw new InvalidArgumentError('signal', 'an AbortSignal', signal);
  if (onProgress !== undefined && typeof onProgress !== 'function')
    throw new InvalidArgumentError('onProgress', 'a function (progress) => void', onProgress);

  const redis = openRedis(connection);
  const batchId = randomUUID();
  const keys = batchKeys(prefix, name, batchId);
  const queue = new Queue(name, { connection: redis, prefix });
  // Connection errors surface in the commands that wait on them; the event alone would be printed as unhandled.
  queue.on('error', () => undefined);
  const startedAt = Date.now();
  try {
    const meta: BatchMeta = {
      v: 1,
      count: list.length,
      retryLostRuns,
      cancelGraceMs,
      ...(perRun && { perRun }),
      ...(total && { total }),
      ...(retry && { retry }),
      ...(pricing && { pricing }),
    };
    const time = await redis.time();
    const start = { [USAGE_CODES[TIME_INDEX]!]: Number(time[0]) * 1000 + Math.floor(Number(time[1]) / 1000) };
    await redis
      .multi()
      .set(keys.meta, JSON.stringify(meta))
      .hset(keys.budget, { ...start, ...limitFields(total) })
      .exec();
    for (let from = 0; from < list.length; from += 1000) {
      await queue.addBulk(
        list.slice(from, from + 1000).map((task, k) => ({
          name: 'run',
          data: { batchId, index: from + k, task },
          opts: { jobId: `${batchId}-${from + k}`, removeOnComplete: true, removeOnFail: true },
        })),
      );
    }
  } catch (error) {
    await queue.close().catch(() => undefined);
    redis.disconnect();
    throw error;
  }

  const runs: Array<DistributedRunReport | undefined> = new Array(list.length);
  const outcomes: Record<RunOutcome, number> = {
    end_of_turn: 0,
    budget_exceeded: 0,
    error: 0,
    cancelled: 0,
    skipped: 0,
  };
  const running = new Set<number>();
  const workers: Record<string, { concurrency: number; runs: number }> = {};
  let done = 0;
  let offset = 0;
  let budget: UsageTotals = emptyUsage();
  let stopped: { reason: SkipReason; message: string } | undefined;
  let stopping: Promise<void> | undefined;

  const snapshot = (event: BatchProgress['event']): BatchProgress => ({
    done,
    total: list.length,
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

  /** Removes the jobs no worker has taken yet and reports their runs skipped (or lost, when a lost run was waiting for its re-run). */
  const stopRest = async (reason: SkipReason, message: string): Promise<void> => {
    stopped ??= { reason, message };
    for (let i = 0; i < list.length; i++) {
      if (runs[i] !== undefined || running.has(i)) continue;
      const removed = await queue.remove(`${batchId}-${i}`);
      if (removed !== 1) continue; // taken by a worker meanwhile (or already done): the worker reports it
      const start = await redis.hget(keys.started, String(i));
      const report =
        start === null
          ? skippedReport(list[i]!.id, reason, message)
          : await lostReport(redis, keys, i, list[i]!.id, JSON.parse(start) as { w: string; a: number });
      await record(redis, keys, i, report);
    }
  };

  const apply = (event: Event): void => {
    if (event.t === 's') {
      if (runs[event.i] !== undefined) return;
      running.add(event.i);
      workers[event.w] ??= { concurrency: event.c, runs: 0 };
      emit({ type: 'started', index: event.i, id: list[event.i]!.id });
      return;
    }
    if (runs[event.i] !== undefined) return;
    const run = fromWire(event.r);
    runs[event.i] = run;
    running.delete(event.i);
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
      await redis.set(keys.abort, message, 'NX');
      await redis.publish(abortChannel(prefix, name), JSON.stringify({ batchId, message }));
    }
    stopping = stopRest('aborted', message);
    await stopping;
  };
  const onAbort = (): void => void abort(signal?.reason).catch(() => undefined);
  if (signal?.aborted) onAbort();
  else signal?.addEventListener('abort', onAbort, { once: true });

  const finished = (async (): Promise<DistributedBatchReport> => {
    try {
      while (done < list.length) {
        const [events, spentField, usage, metaExists] = (await redis
          .multi()
          .lrange(keys.events, offset, offset + 999)
          .hget(keys.budget, 'x')
          .hmget(keys.budget, ...USAGE_CODES)
          .exists(keys.meta)
          .exec())!.map(([error, value]) => {
          if (error) throw error;
          return value;
        }) as [string[], string | null, Array<string | null>, number];
        if (metaExists === 0) {
          throw new Error(
            `batch ${batchId}: its keys are gone from Redis (${keys.meta}) with ${list.length - done} of ${list.length} runs unreported — ` +
              'Redis restarted without persistence (appendonly) or the keys were deleted; the runs reported so far are lost with them',
          );
        }
        // Wall time is the batch's elapsed time: 0 until the batch's start is in the hash.
        budget = usageFromStrings(
          usage.map((v, i) => (i !== TIME_INDEX ? v : v === null ? '0' : String(Math.max(0, Date.now() - startedAt)))),
        );
        offset += events.length;
        for (const line of events) apply(JSON.parse(line) as Event);
        if (spentField !== null && stopped === undefined) {
          const spent = describeSpent(budget, total ?? {});
          stopping = stopRest('budget_exceeded', spent?.message ?? `shared budget exceeded: ${spentField}`);
        }
        if (stopping !== undefined) await stopping;
        if (events.length === 0 && done < list.length) await new Promise((resolve) => setTimeout(resolve, pollMs));
      }
      const totals = runs.reduce<UsageTotals>((sum, run) => addUsage(sum, run!.usage), emptyUsage());
      const report: DistributedBatchReport = {
        runs: runs as DistributedRunReport[],
        totals: { ...totals, outcomes: { ...outcomes } },
        limits: {
          ...(perRun === undefined ? {} : { perRun: { ...perRun } }),
          ...(total === undefined ? {} : { total: { ...total } }),
        },
        concurrency: Object.values(workers).reduce((sum, w) => sum + w.concurrency, 0),
        durationMs: Date.now() - startedAt,
        ...(stopped === undefined || outcomes.skipped === 0 ? {} : { stopped }),
        batchId,
        budget: { ...budget, wallMs: Date.now() - startedAt },
        workers,
      };
      return report;
    } finally {
      signal?.removeEventListener('abort', onAbort);
      if (!keepKeys) await redis.del(...allKeys(keys)).catch(() => undefined);
      await queue.close().catch(() => undefined);
      redis.disconnect();
    }
  })();
  // The caller may never ask for the report; its failure must not become an unhandled rejection.
  finished.catch(() => undefined);

  return {
    batchId,
    report: () => finished,
    abort,
    progress: () => last,
  };
}

function fromWire(wire: WireRunReport): DistributedRunReport {
  const { error, historyError, ...rest } = wire;
  return {
    ...rest,
    ...(error === undefined ? {} : { error: errorFromWire(error) }),
    ...(historyError === undefined ? {} : { historyError: errorFromWire(historyError) }),
  };
}

/** Tasks checked and copied once: ids unique, inputs strings, payloads JSON. */
function materialize(tasks: unknown): DistributedTask[] {
  const iterable =
    typeof tasks === 'object' && tasks !== null && typeof (tasks as Iterable<unknown>)[Symbol.iterator] === 'function';
  if (!iterable) throw new InvalidArgumentError('tasks', 'an array or iterable of { id, input, payload? }', tasks);
  const list = Array.from(tasks as Iterable<unknown>);
  const seen = new Map<string, number>();
  return list.map((task, i) => {
    if (typeof task !== 'object' || task === null)
      throw new InvalidArgumentError(`tasks[${i}]`, 'an object { id, input, payload? }', task);
    const { id, input, payload } = task as Record<string, unknown>;
    if (typeof id !== 'string' || id === '') throw new InvalidArgumentError(`tasks[${i}].id`, 'a non-empty string', id);
    const first = seen.get(id);
    if (first !== undefined)
      throw new InvalidArgumentError(`tasks[${i}].id`, `unique (\`tasks[${first}].id\` is the same)`, id);
    seen.set(id, i);
    if (typeof input !== 'string')
      throw new InvalidArgumentError(`tasks[${i}].input`, 'a string (the user message)', input);
    if (payload !== undefined) {
      let json: string | undefined;
      try {
        json = JSON.stringify(payload);
      } catch {
        json = undefined;
      }
      if (json === undefined)
        throw new InvalidArgumentError(`tasks[${i}].payload`, 'JSON data (the task travels through Redis)', payload);
      return { id, input, payload: JSON.parse(json) as unknown };
    }
    return { id, input };
  });
}
