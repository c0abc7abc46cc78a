import * as fs from 'node:fs';
import { hostname } from 'node:os';
import * as path from 'node:path';
import { Worker, type Job } from 'bullmq';
import {
  InvalidArgumentError,
  runTask,
  safeFileName,
  type AgentLoop,
  type JournalOptions,
  type Pricing,
} from 'agent-state-machine';
import { messageOf } from '../../internal/messageOf';
import { abortChannel, batchKeys, type BatchKeys } from './batchKeys';
import { assertQueueName, openRedis, type RedisConnection } from './connection';
import { pricingFromTable } from './PriceTable';
import { RedisBudget, spentFromReply } from './RedisBudget';
import { runScript } from './redisScripts';
import { lostReport, record, skippedReport, type BatchMeta } from './runRecords';
import type { DistributedTask } from './submitBatch';
import { errorToWire, type WireRunReport } from './wireReport';

/** Options of `startBatchWorker(options)`. */
export interface BatchWorkerOptions {
  /** Redis: a URL, ioredis options or an ioredis client (duplicated, never closed). */
  connection: RedisConnection;
  /** The queue batches are submitted to (`submitBatch({ name })`). */
  name: string;
  /** BullMQ's key prefix. Default `bull`. */
  prefix?: string;
  /**
   * Builds the agent loop for a task, from its data. Called when the run starts; one that
   * takes a while (booting a sandbox) should stop when `signal` aborts.
   */
  agent: (task: DistributedTask, ctx: { signal: AbortSignal; batchId: string }) => AgentLoop | Promise<AgentLoop>;
  /** Runs at once in this worker. Default 4. */
  concurrency?: number;
  /** Each run's JSON Lines history goes to `<historyDir>/<batch id>/<index>-<task id made safe>.jsonl`. */
  historyDir?: string;
  /** Journal every LLM attempt and tool call in each run's history file (`true` or `{ redact }`), as `AgentWithStateMachine` takes it. Needs `historyDir`. */
  journal?: boolean | JournalOptions;
  /** Names this worker in reports. Default `<host>:<pid>:<random>`. */
  workerId?: string;
  /** Prices responses that report no cost, when the batch brought no price table. */
  pricing?: Pricing;
  /**
   * How long a run's job lock lasts without renewal (renewed every half of it). A worker
   * silent this long — killed, frozen, cut off — loses its runs. Default 30,000 ms.
   */
  lockDurationMs?: number;
  /** How often this worker looks for runs whose worker was lost. Default 30,000 ms. */
  stalledIntervalMs?: number;
  /** Where the worker says what went wrong outside a run (Redis errors). Default `console.error`; `false` for none. */
  onError?: ((error: Error) => void) | false;
}

/** A running worker. */
export interface BatchWorkerHandle {
  /** How the worker is named in reports. */
  readonly id: string;
  /** Runs in flight now. */
  readonly running: number;
  /** Lets the runs in flight end (they are reported), stops taking runs, and disconnects. */
  close(): Promise<void>;
}

interface JobData {
  batchId: string;
  index: number;
  task: DistributedTask;
}

/**
 * Starts a worker that runs the tasks of batches submitted to queue `name`: each as one turn
 * through its own `AgentWithStateMachine`, under the batch's per-run limits and its shared
 * budget in Redis (`RedisBudget`), cancelled when the batch is aborted, reported once.
 * Also takes part in finding runs whose worker was lost (BullMQ's stalled-job check).
 */
export function startBatchWorker(options: BatchWorkerOptions): BatchWorkerHandle {
  if (typeof options !== 'object' || options === null)
    throw new InvalidArgumentError('options', 'an object { connection, name, agent, … }', options);
  const {
    connection,
    name,
    prefix = 'bull',
    agent,
    concurrency = 4,
    historyDir,
    pricing,
    lockDurationMs = 30_000,
    stalledIntervalMs = 30_000,
    journal = false,
  } = options;
  const id = options.workerId ?? `${hostname()}:${process.pid}:${Math.random().toString(36).slice(2, 6)}`;
  assertQueueName(name);
  if (typeof agent !== 'function')
    throw new InvalidArgumentError('agent', 'a function (task, { signal }) => AgentLoop', agent);
  if (!(Number.isInteger(concurrency) && concurrency > 0))
    throw new InvalidArgumentError('concurrency', 'a positive integer', concurrency);
  if (historyDir !== undefined && (typeof historyDir !== 'string' || historyDir === ''))
    throw new InvalidArgumentError('historyDir', 'a directory path', historyDir);
  if (journal !== false && historyDir === undefined)
    throw new InvalidArgumentError(
      'journal',
      "left out (or false) unless `historyDir` is set: the journal is kept in each run's history file",
      journal,
    );
  if (typeof id !== 'string' || id === '') throw new InvalidArgumentError('workerId', 'a non-empty string', id);
  if (pricing !== undefined && typeof pricing !== 'function')
    throw new InvalidArgumentError('pricing', 'a function (usage, { model }) => dollars', pricing);
  for (const [key, value] of [
    ['lockDurationMs', lockDurationMs],
    ['stalledIntervalMs', stalledIntervalMs],
  ] as const) {
    if (!(Number.isInteger(value) && value > 0))
      throw new InvalidArgumentError(key, 'a positive integer of milliseconds', value);
  }
  // The documented default: a worker has nowhere else to say what went wrong outside a run.
  // eslint-disable-next-line no-console -- see above
  const report = (error: Error): void => console.error(`batch worker ${id}: ${error.message}`);
  const onError = options.onError === false ? () => undefined : (options.onError ?? report);

  const redis = openRedis(connection);
  const subscriber = openRedis(connection);
  const metas = new Map<string, Promise<BatchMeta | undefined>>();
  const inFlight = new Map<string, Set<AbortController>>();
  const aborted = new Map<string, string>();
  let running = 0;

  // Aborts reach every worker at once; a worker that was not listening finds the abort key when it takes the next job.
  void subscriber.subscribe(abortChannel(prefix, name)).catch((error: unknown) => onError(asError(error)));
  subscriber.on('message', (_channel: string, message: string) => {
    try {
      const { batchId, message: why } = JSON.parse(message) as { batchId: string; message: string };
      aborted.set(batchId, why);
      for (const controller of inFlight.get(batchId) ?? []) controller.abort(why);
    } catch (error) {
      onError(asError(error));
    }
  });

  const metaOf = (batchId: string, keys: BatchKeys): Promise<BatchMeta | undefined> => {
    let meta = metas.get(batchId);
    if (meta === undefined) {
      meta = redis.get(keys.meta).then((json) => (json === null ? undefined : (JSON.parse(json) as BatchMeta)));
      metas.set(batchId, meta);
      meta.catch(() => metas.delete(batchId));
    }
    return meta;
  };

  const process_ = async (job: Job<JobData>): Promise<void> => {
    const { batchId, index, task } = job.data;
    const keys = batchKeys(prefix, name, batchId);
    const meta = await metaOf(batchId, keys);
    if (meta === undefined) return; // the batch is over and its keys are gone: nobody waits for this run
    const controller = new AbortController();
    const controllers = inFlight.get(batchId) ?? new Set();
    inFlight.set(batchId, controllers.add(controller));
    running += 1;
    try {
      const reply = (await runScript(
        redis,
        'asmBegin',
        [keys.budget, keys.started, keys.results, keys.events, keys.abort],
        [index, id, meta.retryLostRuns, concurrency, job.token ?? `${id}:${job.id}:${Date.now()}`],
      )) as string[];
      switch (reply[0]) {
        case 'done':
          return;
        case 'lost':
          await record(
            redis,
            keys,
            index,
            await lostReport(redis, keys, index, task.id, JSON.parse(reply[1]!) as { w: string; a: number }),
          );
          return;
        case 'aborted':
          await record(redis, keys, index, skippedReport(task.id, 'aborted', reply[1]!, id));
          return;
        case 'stopped': {
          const spent = spentFromReply(reply.slice(1), meta.total ?? {});
          await record(
            redis,
            keys,
            index,
            skippedReport(task.id, 'budget_exceeded', spent?.message ?? 'shared budget exceeded', id),
          );
          return;
        }
      }
      const attempt = Number(reply[1]);
      const why = aborted.get(batchId);
      if (why !== undefined) controller.abort(why);
      const report = await runOne(keys, meta, job.data, attempt, controller.signal);
      if (!(await record(redis, keys, index, report))) {
        onError(
          new Error(
            `run ${task.id} of batch ${batchId} was already reported (its lock lapsed and it was reported lost); this result is dropped`,
          ),
        );
      }
    } finally {
      running -= 1;
      controllers.delete(controller);
      if (controllers.size === 0) inFlight.delete(batchId);
    }
  };

  const runOne = async (
    keys: BatchKeys,
    meta: BatchMeta,
    data: JobData,
    attempt: number,
    signal: AbortSignal,
  ): Promise<WireRunReport> => {
    const { batchId, index, task } = data;
    const price = meta.pricing !== undefined ? pricingFromTable(meta.pricing) : pricing;
    let historyFile: string | undefined;
    if (historyDir !== undefined) {
      const dir = path.join(historyDir, batchId);
      fs.mkdirSync(dir, { recursive: true });
      historyFile = path.join(dir, `${index}-${safeFileName(task.id)}.jsonl`);
    }
    const run = await runTask(
      { id: task.id, input: task.input, agent: (ctx) => agent(task, { signal: ctx.signal, batchId }) },
      {
        name: `tasks[${index}]`,
        // The shared budget lives in Redis: every run reserves and charges it there.
        adapter: {
          budget: meta.perRun ?? {},
          ...(meta.retry === undefined ? {} : { retry: meta.retry }),
          cancelGraceMs: meta.cancelGraceMs,
          logger: false,
          externalBudgets: [new RedisBudget(redis, keys, meta.total ?? {}, index)],
          ...(price === undefined ? {} : { pricing: price }),
          journal,
        },
        signal,
        ...(historyFile === undefined
          ? {}
          : {
              historyFile,
              historyOptions: {
                runId: task.id,
                metadata: { taskId: task.id, index, batchId, worker: id, attempt },
                overwrite: true,
              },
            }),
      },
    );
    return {
      id: task.id,
      outcome: run.outcome,
      usage: run.usage,
      durationMs: run.durationMs,
      transitions: run.transitions,
      ...(run.historyFile === undefined ? {} : { historyFile: path.resolve(run.historyFile) }),
      ...(run.error === undefined ? {} : { error: errorToWire(run.error) }),
      ...(run.historyError === undefined ? {} : { historyError: errorToWire(run.historyError) }),
      worker: id,
      attempt,
    };
  };

  const worker = new Worker<JobData>(name, process_, {
    connection: redis,
    prefix,
    concurrency,
    lockDuration: lockDurationMs,
    stalledInterval: stalledIntervalMs,
    // A stalled job always comes back to a worker: `begin` decides, with the batch's
    // `retryLostRuns`, whether it is re-run or reported lost — BullMQ must not fail it first.
    maxStalledCount: 1_000_000_000,
  });
  worker.on('error', (error) => {
    // While Redis restarts every reconnect attempt fails; the worker waits it out. Say what else goes wrong.
    if (!/ECONNREFUSED|ECONNRESET|Connection is closed/.test(error.message)) onError(error);
  });

  let closing: Promise<void> | undefined;
  return {
    id,
    get running() {
      return running;
    },
    close: () =>
      (closing ??= (async () => {
        // Our own runs end first (they report themselves); then BullMQ closes without waiting on
        // its fetch loop, which can hang on a connection that went through a Redis restart.
        const idle = async (): Promise<void> => {
          while (running > 0) await new Promise((r) => setTimeout(r, 20));
        };
        await idle();
        await worker.close(true);
        await idle(); // a job fetched meanwhile still runs to its report
        // QUIT lets replies still on their way arrive; a Redis that is away gets a second, then the socket is dropped.
        await Promise.race([
          Promise.all([redis.quit(), subscriber.quit()]).catch(() => undefined),
          new Promise((r) => setTimeout(r, 1000).unref()),
        ]);
        subscriber.disconnect();
        redis.disconnect();
      })()),
  };
}

function asError(value: unknown): Error {
  return value instanceof Error ? value : new Error(messageOf(value));
}
