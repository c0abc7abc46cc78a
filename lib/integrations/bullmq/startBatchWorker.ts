import * as fs from 'node:fs';
import { hostname } from 'node:os';
import * as path from 'node:path';
import { DelayedError, Worker, type Job } from 'bullmq';
import { JobLeases } from './JobLeases';
import {
  addUsage,
  assertBoundsCalls,
  assertKnownOptions,
  lockFolder,
  runTask,
  safeFileName,
} from 'agent-state-machine/internal';
import {
  APPROVAL_EXTENSION,
  DEFAULT_TABLE,
  extendTable,
  InvalidArgumentError,
  WRAP_UP_EXTENSION,
} from 'agent-state-machine';
import type { AgentLoop, TransitionTable } from 'agent-state-machine';
import type { StoreBatch } from 'agent-state-machine/batch';
import { WORKER_CANNOT, WORKER_OPTION_KEYS } from './optionKeys';
import { messageOf } from '../../internal/messageOf';
import { abortChannel, approvalChannel, batchKeys, raiseChannel, type BatchKeys } from './batchKeys';
import { assertMs, assertQueueName, bounded, DEFAULT_REDIS_TIMEOUT_MS, openRedis } from './connection';
import { openSubscriber } from './openSubscriber';
import { pricingFromTable } from './PriceTable';
import { RedisBudget, spentFromReply } from './RedisBudget';
import type { StrictLimits } from './budgetFields';
import { parkRun, type RunParking } from './parkRun';
import { pushParkEvent } from './parkEvents';
import { ParkWatch } from './ParkWatch';
import { approvalWatchKey } from './approvalRecords';
import { assertWorkerApproval, runApprovals } from './workerApprovals';
import { RAISES_CODE } from './budgetFields';
import { WorkerSlots } from './WorkerSlots';
import { runScript } from './redisScripts';
import { errorReport, lostReport, recordOnce, skippedReport, type BatchMeta } from './runRecords';
import { finishedReport, storeOwner, WorkerStore, type EarlierAttempt } from './WorkerStore';
import type { DistributedTask } from './submitBatch';
import type { BatchWorkerHandle, BatchWorkerOptions } from './BatchWorkerOptions';
import { errorToWire, type WireRunReport } from './wireReport';

export type { BatchWorkerHandle, BatchWorkerOptions } from './BatchWorkerOptions';

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
  assertKnownOptions(options, WORKER_OPTION_KEYS, 'startBatchWorker()', WORKER_CANNOT);
  const {
    connection,
    name,
    prefix = 'bull',
    agent,
    run: frameworkRun,
    concurrency = 4,
    historyDir,
    store,
    pricing,
    lockDurationMs = 30_000,
    stalledIntervalMs = 30_000,
    journal = false,
    redisTimeoutMs = DEFAULT_REDIS_TIMEOUT_MS,
    closeTimeoutMs = 30_000,
    approve,
    approvalTimeoutMs,
  } = options;
  assertMs('redisTimeoutMs', redisTimeoutMs);
  assertMs('closeTimeoutMs', closeTimeoutMs);
  const id = options.workerId ?? `${hostname()}:${process.pid}:${Math.random().toString(36).slice(2, 6)}`;
  assertQueueName(name);
  if (frameworkRun !== undefined) {
    if (typeof frameworkRun !== 'function')
      throw new InvalidArgumentError('run', 'a function (task, mirror, { signal, batchId }) => Promise', frameworkRun);
    if (agent !== undefined)
      throw new InvalidArgumentError('agent', 'left out when `run` is given (give one of them)', agent);
  } else if (typeof agent !== 'function')
    throw new InvalidArgumentError('agent', 'a function (task, { signal }) => AgentLoop', agent);
  assertWorkerApproval(approve, approvalTimeoutMs, frameworkRun !== undefined);
  if (!(Number.isInteger(concurrency) && concurrency > 0))
    throw new InvalidArgumentError('concurrency', 'a positive integer', concurrency);
  if (historyDir !== undefined && (typeof historyDir !== 'string' || historyDir === ''))
    throw new InvalidArgumentError('historyDir', 'a directory path', historyDir);
  if (store !== undefined && (typeof store !== 'object' || store === null || typeof store.openBatch !== 'function'))
    throw new InvalidArgumentError('store', 'a RunStore (new PostgresStore(url))', store);
  if (store !== undefined && historyDir !== undefined)
    throw new InvalidArgumentError(
      'historyDir',
      "left out beside `store`: each run's records go to one place (give `historyDir` or `store`)",
      historyDir,
    );
  if (journal !== false && historyDir === undefined && store === undefined)
    throw new InvalidArgumentError(
      'journal',
      "left out (or false) unless `historyDir` or `store` is set: the journal is kept in each run's records",
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
  const inStore = store === undefined ? undefined : new WorkerStore(store, redis);
  const metas = new Map<string, Promise<BatchMeta | undefined>>();
  const inFlight = new Map<string, Set<AbortController>>();
  const aborted = new Map<string, string>();
  let running = 0;
  // Runs in a slot never pass `concurrency`, those that went on after a park included; parked ones hold none.
  const slots = new WorkerSlots(concurrency);
  // What parked runs wait for (a raise, their answers), heard on the channels below or polled.
  const watch = new ParkWatch(onError);
  /** Runs in a slot whose job BullMQ no longer counts (they parked, and went on after a raise). */
  let detachedInSlot = 0;

  // Aborts reach every worker at once; a worker that was not listening finds the abort key when it takes the next job.
  // Raises and answered approval requests too; a worker that missed one finds it by polling (ParkWatch).
  const subscriber = openSubscriber(
    connection,
    {
      [abortChannel(prefix, name)]: (message) => {
        try {
          const { batchId, message: why } = JSON.parse(message) as { batchId: string; message: string };
          aborted.set(batchId, why);
          for (const controller of inFlight.get(batchId) ?? []) controller.abort(why);
        } catch (error) {
          onError(asError(error));
        }
      },
      [raiseChannel(prefix, name)]: (batchId) => watch.heard(batchKeys(prefix, name, batchId).budget),
      [approvalChannel(prefix, name)]: (message) => {
        // `<batch id>:<index>`: a batch id has no `:`.
        const at = message.lastIndexOf(':');
        watch.heard(approvalWatchKey(batchKeys(prefix, name, message.slice(0, at)), Number(message.slice(at + 1))));
      },
    },
    onError,
  );

  const metaOf = (batchId: string, keys: BatchKeys): Promise<BatchMeta | undefined> => {
    let meta = metas.get(batchId);
    if (meta === undefined) {
      meta = redis.get(keys.meta).then((json) => (json === null ? undefined : (JSON.parse(json) as BatchMeta)));
      metas.set(batchId, meta);
      meta.catch(() => metas.delete(batchId));
    }
    return meta;
  };

  /** One Redis operation of a run, within `redisTimeoutMs`. */
  const within = <T>(what: string, operation: () => Promise<T>): Promise<T> =>
    bounded(redis, what, operation, redisTimeoutMs);
  /** Writes a run's report; says so when it cannot be (the batch gone, or another report first). */
  const recordRun = (keys: BatchKeys, batchId: string, index: number, report: WireRunReport): Promise<void> =>
    recordOnce(redis, within, onError, { keys, batchId, index, report });

  const process_ = async (job: Job<JobData>, token?: string): Promise<void> => {
    const { batchId, index, task } = job.data;
    const keys = batchKeys(prefix, name, batchId);
    const meta = await within(`reading batch ${batchId}`, () => metaOf(batchId, keys));
    if (meta === undefined) return; // the batch is over and its keys are gone: nobody waits for this run
    await slots.take();
    const controller = new AbortController();
    const controllers = inFlight.get(batchId) ?? new Set();
    inFlight.set(batchId, controllers.add(controller));
    running += 1;
    const end = (inSlot: boolean): void => {
      running -= 1;
      controllers.delete(controller);
      if (controllers.size === 0) inFlight.delete(batchId);
      if (inSlot) slots.free();
    };
    let whole: Promise<void> | undefined;
    let parking: RunParking | undefined;
    let detached = false;
    try {
      const reply = (await within(`starting run ${task.id} of batch ${batchId}`, () =>
        runScript(
          redis,
          'asmBegin',
          [keys.budget, keys.started, keys.results, keys.events, keys.abort, keys.waiting],
          [index, id, meta.retryLostRuns, concurrency, job.token ?? `${id}:${job.id}:${Date.now()}`],
        ),
      )) as string[];
      switch (reply[0]) {
        case 'done':
          return;
        case '!missing':
          // Its budget is gone (Redis restarted without persistence, or the key was evicted): not run without it.
          onError(
            new Error(
              `run ${task.id} of batch ${batchId} not started: the batch's budget is gone from Redis (${keys.budget})`,
            ),
          );
          return;
        case 'lost':
          await recordRun(
            keys,
            batchId,
            index,
            await lostReport(redis, keys, index, task.id, JSON.parse(reply[1]!) as { w: string; a: number }),
          );
          return;
        case 'aborted':
          await recordRun(keys, batchId, index, skippedReport(task.id, 'aborted', reply[1]!, id));
          return;
        case 'stopped': {
          const spent = spentFromReply(reply.slice(1), meta.total ?? {});
          await recordRun(
            keys,
            batchId,
            index,
            skippedReport(task.id, 'budget_exceeded', spent?.message ?? 'shared budget exceeded', id),
          );
          return;
        }
        case 'wait':
          return await leases.waitForRaise(job, token, keys, Number(reply[1]));
      }
      const attempt = Number(reply[1]);
      const why = aborted.get(batchId);
      if (why !== undefined) controller.abort(why);
      if (meta.total?.whenSpent === 'pause' || approve !== undefined)
        parking = parkRun({
          slots,
          watch,
          budgetKey: keys.budget,
          readRaises: () => readRaises(keys),
          approvals:
            approve === undefined
              ? undefined
              : runApprovals({ redis, keys, prefix, name, batchId, index }, attempt, watch, within),
          signal: controller.signal,
          end: (reason) => controller.abort(reason),
          onSlot: () => recount(),
          onProblem: (message) => onError(new Error(`run ${task.id} of batch ${batchId}: ${message}`)),
          onPark: (parked) => pushParkEvent(redis, keys, index, parked, onError),
        });
      // Counts the run among those BullMQ no longer sees while it is in a slot without its job.
      let counted = false;
      const recount = (ended = false): void => {
        const should = detached && !ended && parking!.inSlot;
        if (should === counted) return;
        counted = should;
        detachedInSlot += should ? 1 : -1;
        worker.concurrency = Math.max(1, concurrency - detachedInSlot);
      };
      whole = runOne(keys, meta, job.data, attempt, controller.signal, parking).then((report) =>
        recordRun(keys, batchId, index, report),
      );
      if (parking === undefined) return await whole;
      const first = await Promise.race([whole.then(() => 'ended'), parking.parked.then(() => 'parked')]);
      if (first === 'ended') return await whole;
      // Parked: its job leaves BullMQ's active list, so this worker's BullMQ slot goes to another job.
      detached = await leases.letGo(job, token, task.id);
      if (!detached) return await whole;
      recount();
      leases.keep(job, whole, () => {
        recount(true);
        end(parking!.inSlot);
      });
      throw new DelayedError();
    } finally {
      if (!detached) end(whole === undefined || (parking?.inSlot ?? true));
    }
  };

  const leases = new JobLeases(redis, lockDurationMs, within, onError);

  const runOne = async (
    keys: BatchKeys,
    meta: BatchMeta,
    data: JobData,
    attempt: number,
    signal: AbortSignal,
    parking: RunParking | undefined,
  ): Promise<WireRunReport> => {
    const { batchId, index, task } = data;
    const price = meta.pricing !== undefined ? pricingFromTable(meta.pricing) : pricing;
    let historyFile: string | undefined;
    if (historyDir !== undefined) {
      const dir = path.join(historyDir, batchId);
      fs.mkdirSync(dir, { recursive: true });
      // The workers of this batch share its folder; any other batch (runBatch, or a batch of the
      // same id on another Redis or queue) is refused it, and the run is not made.
      try {
        lockFolder(dir, storeOwner(redis, prefix, name, batchId), { shared: true });
      } catch (error) {
        return errorReport(task.id, asError(error), id, attempt);
      }
      historyFile = path.join(dir, `${index}-${safeFileName(task.id)}.jsonl`);
    }
    // Charges ride on the next reservation: one round trip per call; the last is settled below.
    const budget = new RedisBudget(redis, keys, meta.total ?? {}, index, {
      deferCharges: true,
      timeoutMs: redisTimeoutMs,
    });
    if (meta.total?.whenSpent === 'pause' && frameworkRun !== undefined)
      return errorReport(
        task.id,
        new InvalidArgumentError(
          'total.whenSpent',
          "'stop' (or left out) for a batch run by a worker with `run`: a framework's loop cannot be paused at a call its cap refused; pausing runs through `agent` only",
          'pause',
        ),
        id,
        attempt,
      );
    // In a store: the batch joined, and what an earlier attempt of this run left there (its worker lost).
    let inBatch: StoreBatch | undefined;
    let before: EarlierAttempt = { kind: 'not_started' };
    if (inStore !== undefined) {
      try {
        inBatch = await inStore.batch(prefix, name, batchId, keys, concurrency);
        before = await inStore.earlier(inBatch, task.id, index, keys, budget);
      } catch (error) {
        await settle(budget, task.id, batchId);
        return errorReport(task.id, asError(error), id, attempt);
      }
      if (before.kind === 'finished') {
        await settle(budget, task.id, batchId);
        return { ...finishedReport(task.id, before), worker: id, attempt };
      }
    }
    const resumeFrom = before.kind === 'interrupted' ? before.resumeFrom : undefined;
    const runOptions = {
      runId: task.id,
      metadata: { taskId: task.id, index, batchId, worker: id, attempt },
    };
    const run = await runTask(
      frameworkRun !== undefined
        ? {
            id: task.id,
            input: task.input,
            run: (mirror, ctx) => frameworkRun(task, mirror, { signal: ctx.signal, batchId }),
          }
        : {
            id: task.id,
            input: task.input,
            agent: (ctx) => boundedLoop(agent!(task, { signal: ctx.signal, batchId }), meta.total),
          },
      {
        name: `tasks[${index}]`,
        // The shared budget lives in Redis: every run reserves and charges it there.
        adapter: {
          budget: meta.perRun ?? {},
          // A framework run is given the producer's retries only to refuse them by name (the
          // framework retries its own calls); its cancel grace is the framework's own.
          ...(meta.retry === undefined ? {} : { retry: meta.retry }),
          ...(frameworkRun === undefined ? { cancelGraceMs: meta.cancelGraceMs } : {}),
          logger: false,
          externalBudgets: [budget],
          // A run that wraps up within a cap moves through WrappingUp, one that asks approval through AwaitingApproval.
          ...(frameworkRun === undefined ? { table: wrapsUp(meta) ? tables.wrapUp : tables.plain } : {}),
          ...(approve === undefined ? {} : { approve }),
          ...(approvalTimeoutMs === undefined ? {} : { approvalTimeoutMs }),
          ...(price === undefined ? {} : { pricing: price }),
          journal,
          ...(resumeFrom === undefined ? {} : { resumeFrom }),
        },
        signal,
        ...(parking === undefined ? {} : { awaitPause: parking.awaitPause }),
        ...(historyFile === undefined ? {} : { historyFile, historyOptions: { ...runOptions, overwrite: true } }),
        ...(inBatch === undefined
          ? {}
          : { openSink: (table: TransitionTable<string>) => inBatch.openRun(task.id, runOptions, table) }),
      },
    );
    await settle(budget, task.id, batchId);
    const capWait = parking?.capWait();
    const approvalWait = parking?.approvalWait();
    return {
      id: task.id,
      outcome: run.outcome,
      // The adapter counted the earlier attempt's spend in the run's usage; a run that failed before its adapter existed did not.
      usage: before.kind === 'interrupted' && run.resume === undefined ? addUsage(before.usage, run.usage) : run.usage,
      durationMs: run.durationMs,
      transitions: run.transitions,
      ...(run.historyFile === undefined
        ? {}
        : { historyFile: historyDir === undefined ? run.historyFile : path.resolve(run.historyFile) }),
      ...(run.resume === undefined ? {} : { resumed: run.resume.mode }),
      ...(run.error === undefined ? {} : { error: errorToWire(run.error) }),
      ...(run.historyError === undefined ? {} : { historyError: errorToWire(run.historyError) }),
      ...(capWait === undefined ? {} : { capWait }),
      ...(approvalWait === undefined ? {} : { approval: approvalWait }),
      worker: id,
      attempt,
    };
  };

  /** The tables a run moves through: with the approval states when this worker asks approval. */
  const plain: TransitionTable<string> =
    approve === undefined ? DEFAULT_TABLE : extendTable(DEFAULT_TABLE, APPROVAL_EXTENSION);
  const tables = { plain, wrapUp: extendTable(plain, WRAP_UP_EXTENSION) };

  /** A batch's raise count, for its runs parked at the cap: Infinity once it stopped on another limit (or is gone). */
  const readRaises = async (keys: BatchKeys): Promise<number> => {
    const [count, stopped] = await within(`reading the raises of ${keys.budget}`, () =>
      redis.hmget(keys.budget, RAISES_CODE, 'x'),
    );
    return stopped !== null || count === null ? Infinity : Number(count);
  };

  /** Sends a run's last charge, kept until now (deferCharges). */
  const settle = (budget: RedisBudget, taskId: string, batchId: string): Promise<unknown> =>
    budget
      .settle()
      .catch((error: unknown) =>
        onError(
          new Error(`run ${taskId} of batch ${batchId}: its last charge did not reach Redis: ${messageOf(error)}`),
        ),
      );

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

  const ready = bounded(redis, `worker ${id}: connecting`, () => redis.ping(), redisTimeoutMs).then(
    () => undefined,
    (error: unknown) => {
      const failure = asError(error);
      onError(failure);
      throw failure;
    },
  );
  ready.catch(() => undefined);

  let closing: Promise<void> | undefined;
  return {
    id,
    ready,
    get running() {
      return running;
    },
    close: () =>
      (closing ??= (async () => {
        const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms).unref());
        const idle = async (ms: number): Promise<void> => {
          const until = Date.now() + ms;
          while (running > 0 && Date.now() < until) await sleep(20);
        };
        // Our own runs end first (they report themselves, each Redis step within redisTimeoutMs) …
        await idle(closeTimeoutMs);
        // … or are cancelled, with a second to end.
        const cancel = (): void => {
          for (const controllers of inFlight.values())
            for (const controller of controllers) controller.abort('the worker is closing');
        };
        cancel();
        await idle(1000);
        // Then BullMQ, without waiting on its fetch loop, which can hang on a connection that went
        // through a Redis restart (or on a Redis that is gone): a second at most.
        await Promise.race([worker.close(true).catch(() => undefined), sleep(1000)]);
        cancel(); // a job fetched meanwhile
        await idle(1000);
        watch.close();
        await inStore?.close();
        // QUIT lets replies still on their way arrive; a Redis that is away gets a second, then the socket is dropped.
        await Promise.race([Promise.all([redis.quit(), subscriber.quit()]).catch(() => undefined), sleep(1000)]);
        subscriber.disconnect();
        redis.disconnect();
      })()),
  };
}

function asError(value: unknown): Error {
  return value instanceof Error ? value : new Error(messageOf(value));
}

/** A worker's loop, refused by the words of a strict cap when the batch's total cap is strict and the loop cannot bound its calls. */
async function boundedLoop(loop: AgentLoop | Promise<AgentLoop>, total: StrictLimits | undefined): Promise<AgentLoop> {
  const ready = await loop;
  if (total?.maxCostUsd !== undefined && total.strict !== false) assertBoundsCalls(ready, 'total.maxCostUsd');
  return ready;
}

function wrapsUp(meta: BatchMeta): boolean {
  return meta.perRun?.wrapUp !== undefined || meta.total?.wrapUp !== undefined;
}
