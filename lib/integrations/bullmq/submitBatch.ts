import { assertBatchApproval } from './batchApproval';
import { createHash, randomUUID } from 'node:crypto';
import { Queue } from 'bullmq';
import { assertKnownOptions, assertBudgetLimits, checkTaskList } from 'agent-state-machine/internal';
import {
  InvalidArgumentError,
  type BatchPause,
  type BatchProgress,
  type BudgetLimits,
  type RetryOptions,
} from 'agent-state-machine';
import { SUBMIT_CANNOT, SUBMIT_OPTION_KEYS } from './optionKeys';
import type { Redis } from 'ioredis';
import { batchKeys, isBatchId, type BatchKeys } from './batchKeys';
import { capsOf, limitFields, type StrictLimits } from './budgetFields';
import { assertMs, assertQueueName, bounded, openRedis, type RedisConnection } from './connection';
import { assertPriceTable, type PriceTable } from './PriceTable';
import { runScript } from './redisScripts';
import { parseBatchMeta, type BatchMeta } from './runRecords';
import { COUNT_CODE, EXPIRE_CODE } from './scripts';
import type { BatchHandle } from './BatchHandle';
import type { RunStore } from 'agent-state-machine/batch';
import { storeOwner } from './WorkerStore';
import { trackBatch } from './trackBatch';
import { assertOnPause } from './pauseNotice';
import { answeredBy, assertOnApproval, type DistributedApprovalRequest } from './approvalNotice';
import { queueTasks } from './queueTasks';
import type { DistributedTask } from './DistributedTask';
import { OPTION_DEFAULTS } from '../../internal/optionTable';

export type { DistributedTask } from './DistributedTask';

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
  /**
   * Limits for the whole batch, in Redis, shared by every worker; `maxWallMs` is the batch's
   * elapsed time. `maxCostUsd` is strict unless `strict: false`: spend never passes it, as each
   * LLM call holds its worst-case cost before it starts, and one that does not fit is not made.
   * A worker refuses a loop that cannot bound its calls before the run makes any (its run ends
   * in Error, naming what to give); `strict: false` accepts an overshoot of at most one LLM
   * response per run in flight instead. `whenSpent: 'pause'` (strict caps only): a run whose
   * call does not fit parks on its worker, holding no slot (its job delayed, on a lease the
   * worker renews), and tasks not started wait, until the cap is raised (`handle.raise`,
   * `attachBatch(…).raise`, `raiseBatch`, `agent-sm raise --redis`); then they go on.
   */
  total?: StrictLimits;
  /** Retries of a failed LLM call, per run. */
  retry?: RetryOptions;
  /** Prices per model, used by every worker for responses that report no cost. */
  pricing?: PriceTable;
  /**
   * The batch's approval policy: tool names mapped to `true`. Stored with the batch in Redis, so
   * every worker of the queue runs its tasks under it: a run whose LLM calls one of these tools
   * parks on its worker until answered (`onApproval`, `attachBatch`, `agent-sm approve --redis`).
   * A worker whose own `approve` or `approvalTimeoutMs` says otherwise ends the run in Error,
   * naming the option. A function cannot be stored: give it to `startBatchWorker` instead.
   */
  approve?: Readonly<Record<string, boolean>>;
  /** With `approve`: a parked run left unanswered this long ends on its own (ApprovalTimedOut). */
  approvalTimeoutMs?: number;
  /** How many times a run whose worker was lost is started again. Default 0: a re-run would spend twice. */
  retryLostRuns?: number;
  /** After an abort, how long a run's running operation may take to stop. Default 2,000 ms, as on the adapter. */
  cancelGraceMs?: number;
  /** Aborting cancels the runs in flight on every worker and skips the rest; the report still comes back. */
  signal?: AbortSignal;
  /**
   * Called as runs start and end, park at a paused cap and go on, and when runs are skipped. A
   * parked run is not counted in `running`. A throw is caught and ignored.
   */
  onProgress?: (progress: BatchProgress) => void;
  /**
   * With `total.whenSpent: 'pause'`: called once per pause at the cap, as `runBatch` calls it,
   * with the batch's figures read from Redis and `raise({ maxCostUsd })` (the handle's raise),
   * which may be called then or later. A throw or a failed raise is a process warning; the batch
   * stays paused.
   */
  onPause?: (pause: BatchPause) => void | Promise<void>;
  /**
   * Called for each run parked for approval on its worker (`startBatchWorker({ approve })`, or a
   * framework's own with `drive`: AI SDK `needsApproval`, where an input given to `approve` is left
   * out), as `runBatch` calls its own: with the run's id and index, its calls, and `approve(callId, {
   * input? })` / `deny(callId, reason?)`, which may be called then or later, each answer going
   * to Redis for the run's worker. A throw or a rejection is a process warning; the run stays
   * parked (until answered, its worker's `approvalTimeoutMs`, or the batch's abort).
   */
  onApproval?: (request: DistributedApprovalRequest) => void | Promise<void>;
  /** How often the producer reads what the workers reported. Default 100 ms. */
  pollMs?: number;
  /** Leave the batch's keys in Redis for good, without an expiry. Default false. */
  keepKeys?: boolean;
  /**
   * Names the batch (its keys, its history folder): letters, digits, `.`, `_`, `-`. A producer
   * that submits the same tasks under the same id again (after a crash) resumes that batch — the
   * same budget, the runs already reported not run again — and any process can
   * `attachBatch({ batchId })`. Default a random UUID.
   */
  batchId?: string;
  /**
   * How long each Redis operation waits for an unreachable Redis: submitting fails after it,
   * and `report()` rejects once Redis has not answered for this long, naming the address and
   * the wait. Default 10,000 ms.
   */
  timeoutMs?: number;
  /** Once every run is reported, the batch's keys (its report among them) expire after this. Default 86,400,000 ms (a day). */
  expireAfterMs?: number;
  /** Where the report is written as JSON once it is built, before its keys are given their expiry. */
  reportFile?: string;
  /**
   * The store the workers keep the runs in (`startBatchWorker({ store })`): the batch's manifest
   * (its tasks in order, its limits) is recorded there before any job is queued, under
   * `batchId`, so that the store shows the tasks that never started; a producer restarted with
   * the same `batchId` finds it there. A batch of that id another batch started is refused. The
   * producer does not close the store.
   */
  store?: RunStore;
}

export type { BatchHandle, DistributedBatchReport, DistributedRunReport } from './BatchHandle';

/**
 * Puts a batch on a BullMQ queue for workers on any machine (`startBatchWorker`), with its
 * `total` limits in Redis as one budget for the whole cluster, and returns a handle whose
 * `report()` resolves with the same report `runBatch` gives — each run naming its worker.
 *
 * - Budget: every LLM call on every worker checks the shared budget first, in one Redis round
 *   trip that also charges the previous response. Call counts never pass their caps; a strict
 *   `maxCostUsd` is never passed; a plain one by at most one LLM response per run in flight in
 *   the cluster. Once a limit is spent, runs in flight end `budget_exceeded` and runs not
 *   started are `skipped`.
 * - Fail closed: a worker that cannot price a response under a dollar cap, a budget gone from
 *   Redis, or a Redis that does not answer within the workers' `redisTimeoutMs` ends the run
 *   as an error saying why; the call is not made.
 * - Abort: the workers hear it at once (pub/sub); runs in flight are cancelled, the rest skipped.
 * - A worker that dies: its runs in flight are reported `error` (`WorkerLostError`) when
 *   BullMQ's stalled-job check on a live worker finds their lock gone — within the workers'
 *   `lockDurationMs + stalledIntervalMs` (30 s + 30 s by default), plus the wait for a free
 *   slot — and are not run again unless `retryLostRuns` allows it.
 * - Approval: a run whose worker's `approve` holds one of its tool calls parks there, holding
 *   no slot, until `onApproval` here (or an `attachBatch` handle's, in any process) answers
 *   every call through Redis; then it goes on in the next free slot of its worker.
 * - Every task is reported exactly once: a run's report is written with HSETNX.
 * - Found again: with a `batchId`, a restarted producer resumes the batch, and any process can
 *   `attachBatch` to it. Its keys expire `expireAfterMs` after its last run is reported.
 */
export async function submitBatch(tasks: Iterable<DistributedTask>, options: SubmitBatchOptions): Promise<BatchHandle> {
  if (typeof options !== 'object' || options === null)
    throw new InvalidArgumentError('options', 'an object { connection, name, … }', options);
  assertKnownOptions(options, SUBMIT_OPTION_KEYS, 'submitBatch()', SUBMIT_CANNOT);
  const {
    connection,
    name,
    prefix = 'bull',
    perRun,
    total,
    retry,
    pricing,
    retryLostRuns = OPTION_DEFAULTS.retryLostRuns,
    cancelGraceMs = OPTION_DEFAULTS.cancelGraceMs,
    signal,
    onProgress,
    onPause,
    onApproval,
    pollMs = OPTION_DEFAULTS.pollMs,
    keepKeys = OPTION_DEFAULTS.keepKeys,
    batchId = randomUUID(),
    timeoutMs = OPTION_DEFAULTS.timeoutMs,
    expireAfterMs = OPTION_DEFAULTS.expireAfterMs,
    reportFile,
    store,
    approve,
    approvalTimeoutMs,
  } = options;
  assertQueueName(name);
  const list = materialize(tasks);
  assertBudgetLimits(perRun, 'perRun');
  assertStrictLimits(total, 'total');
  assertPriceTable(pricing);
  if (!(Number.isInteger(retryLostRuns) && retryLostRuns >= 0))
    throw new InvalidArgumentError('retryLostRuns', 'a non-negative integer', retryLostRuns);
  if (!(typeof cancelGraceMs === 'number' && Number.isFinite(cancelGraceMs) && cancelGraceMs >= 0))
    throw new InvalidArgumentError('cancelGraceMs', 'a non-negative number of milliseconds', cancelGraceMs);
  if (!(typeof pollMs === 'number' && Number.isFinite(pollMs) && pollMs > 0))
    throw new InvalidArgumentError('pollMs', 'a positive number of milliseconds', pollMs);
  if (signal !== undefined && !(signal instanceof AbortSignal))
    throw new InvalidArgumentError('signal', 'an AbortSignal', signal);
  assertOnPause(onPause, total);
  assertOnApproval(onApproval);
  assertBatchApproval(approve, approvalTimeoutMs);
  if (onProgress !== undefined && typeof onProgress !== 'function')
    throw new InvalidArgumentError('onProgress', 'a function (progress) => void', onProgress);
  if (!isBatchId(batchId))
    throw new InvalidArgumentError('batchId', 'letters, digits, `.`, `_` or `-` (1 to 200 of them)', batchId);
  assertMs('timeoutMs', timeoutMs);
  if (!(Number.isInteger(expireAfterMs) && expireAfterMs > 0))
    throw new InvalidArgumentError('expireAfterMs', 'a positive whole number of milliseconds', expireAfterMs);
  if (reportFile !== undefined && (typeof reportFile !== 'string' || reportFile === ''))
    throw new InvalidArgumentError('reportFile', 'a file path', reportFile);
  if (store !== undefined && (typeof store !== 'object' || store === null || typeof store.openBatch !== 'function'))
    throw new InvalidArgumentError('store', 'a RunStore (new PostgresStore(url))', store);

  const redis = openRedis(connection);
  const keys = batchKeys(prefix, name, batchId);
  const queue = new Queue(name, { connection: redis, prefix });
  // Connection errors surface in the commands that wait on them; the event alone would be printed as unhandled.
  queue.on('error', () => undefined);
  const within = <T>(what: string, operation: () => Promise<T>): Promise<T> =>
    bounded(redis, `submitBatch: ${what}`, operation, timeoutMs, signal);
  const ids = list.map((task) => task.id);
  try {
    const meta: BatchMeta = {
      v: 1,
      count: list.length,
      tasks: createHash('sha256').update(JSON.stringify(list)).digest('hex'),
      retryLostRuns,
      cancelGraceMs,
      ...(perRun && { perRun }),
      ...(total && { total }),
      ...(retry && { retry }),
      ...(pricing && { pricing }),
      ...(approve === undefined ? {} : { approve: { ...approve } }),
      ...(approvalTimeoutMs === undefined ? {} : { approvalTimeoutMs }),
    };
    const fields = {
      ...limitFields(total),
      [COUNT_CODE]: list.length,
      ...(keepKeys ? {} : { [EXPIRE_CODE]: expireAfterMs }),
    };
    const created = await within('creating the batch', () =>
      runScript(
        redis,
        'asmCreate',
        [keys.meta, keys.ids, keys.budget],
        [JSON.stringify(meta), JSON.stringify(ids), ...Object.entries(fields).flat()],
      ),
    );
    let reported = new Set<number>();
    if (created !== 1) reported = await resumable(redis, batchId, keys, meta, within);
    // Before any job: a worker joins the batch the producer recorded, and a batch of this id another batch started is refused here.
    if (store !== undefined) await recordManifest(store, redis, { prefix, name, perRun, total }, batchId, ids);
    await queueTasks(queue, batchId, list, reported, within);
  } catch (error) {
    await Promise.race([queue.close().catch(() => undefined), new Promise((r) => setTimeout(r, 1000).unref())]);
    redis.disconnect();
    throw error;
  }
  return trackBatch({
    redis,
    queue,
    prefix,
    name,
    batchId,
    keys,
    ids,
    perRun,
    total,
    timeoutMs,
    pollMs,
    expireAfterMs: keepKeys ? undefined : expireAfterMs,
    reportFile,
    signal,
    onProgress,
    onPause,
    onApproval,
    answeredBy: answeredBy('submitBatch'),
  }).handle;
}

/** Records the batch's manifest in the store the workers keep its runs in (refused when another batch started this id). */
async function recordManifest(
  store: RunStore,
  redis: Redis,
  batch: { prefix: string; name: string; perRun: BudgetLimits | undefined; total: StrictLimits | undefined },
  batchId: string,
  ids: readonly string[],
): Promise<void> {
  const { prefix, name, perRun, total } = batch;
  const inStore = await store.openBatch({
    batchId,
    owner: storeOwner(redis, prefix, name, batchId),
    overwrite: false,
    shared: true,
    // Each worker has its own concurrency: the producer's manifest says none.
    manifest: {
      startedAt: Date.now(),
      concurrency: 0,
      limits: { ...(perRun && { perRun }), ...(total && { total: capsOf(total) }) },
      tasks: ids.map((id) => ({ id, file: id })),
    },
  });
  await inStore.close();
}

/**
 * A batch of this id is in Redis already: it is resumed when it holds the same tasks and its
 * budget is there (fail closed: never a batch without its budget). Returns the runs reported.
 */
async function resumable(
  redis: Redis,
  batchId: string,
  keys: BatchKeys,
  meta: BatchMeta,
  within: <T>(what: string, operation: () => Promise<T>) => Promise<T>,
): Promise<Set<number>> {
  const [json, budgetThere, done] = await within('reading the batch to resume', () =>
    Promise.all([redis.get(keys.meta), redis.exists(keys.budget), redis.hkeys(keys.results)]),
  );
  const was = json === null ? undefined : parseBatchMeta(json);
  if (was?.tasks !== meta.tasks)
    throw new InvalidArgumentError(
      'batchId',
      `a new id, or the same tasks (ids, inputs, payloads, in order) as batch ${batchId} was submitted with, to resume it`,
      batchId,
    );
  if (budgetThere === 0)
    throw new Error(
      `batch ${batchId}: its settings are in Redis but its budget (${keys.budget}) is gone (evicted or deleted); it cannot be resumed without it`,
    );
  return new Set(done.map(Number));
}

/** `BudgetLimits`, and `strict` beside `maxCostUsd` (strict unless `false`). */
function assertStrictLimits(limits: unknown, name: string): asserts limits is StrictLimits | undefined {
  if (limits === undefined) return;
  const whenSpent: unknown = (limits as { whenSpent?: unknown }).whenSpent;
  const strict: unknown = (limits as { strict?: unknown }).strict;
  if (whenSpent !== undefined && whenSpent !== 'pause' && whenSpent !== 'stop')
    throw new InvalidArgumentError(`${name}.whenSpent`, "'pause' or 'stop'", whenSpent);
  if (whenSpent === 'pause' && ((limits as StrictLimits).maxCostUsd === undefined || strict === false))
    throw new InvalidArgumentError(
      `${name}.whenSpent`,
      "left out (or 'stop') unless `maxCostUsd` is a strict cap: only a cap that holds each call before it starts can pause it",
      whenSpent,
    );
  if (whenSpent === 'pause' && (limits as StrictLimits).maxWallMs !== undefined)
    throw new InvalidArgumentError(
      `${name}.maxWallMs`,
      "left out beside whenSpent: 'pause' on BullMQ: the workers' parked runs wait for a raise and do not meet a deadline there (runBatch() has both)",
      (limits as StrictLimits).maxWallMs,
    );
  if (whenSpent === 'pause' && (limits as StrictLimits).wrapUp !== undefined)
    throw new InvalidArgumentError(
      `${name}.wrapUp`,
      "left out when `whenSpent` is 'pause': a run at the cap waits for a raise instead of wrapping up",
      (limits as StrictLimits).wrapUp,
    );
  if (strict !== undefined && typeof strict !== 'boolean')
    throw new InvalidArgumentError(`${name}.strict`, 'true or false', strict);
  if (strict === true && (limits as StrictLimits).maxCostUsd === undefined)
    throw new InvalidArgumentError(
      `${name}.strict`,
      'set only beside maxCostUsd (it makes the dollar cap strict)',
      strict,
    );
  assertBudgetLimits(typeof limits === 'object' && limits !== null ? capsOf(limits as StrictLimits) : limits, name);
}

/** Tasks checked and copied once: ids unique, inputs strings, payloads JSON. */
function materialize(tasks: unknown): DistributedTask[] {
  const shape = { list: '{ id, input, payload? }', item: '{ id, input, payload? }' };
  return checkTaskList(tasks, shape, ({ id, input, payload }, i) => {
    if (typeof input !== 'string')
      throw new InvalidArgumentError(`tasks[${i}].input`, 'a string (the user message)', input);
    if (payload === undefined) return { id: id as string, input };
    let json: string | undefined;
    try {
      json = JSON.stringify(payload);
    } catch {
      json = undefined;
    }
    if (json === undefined)
      throw new InvalidArgumentError(`tasks[${i}].payload`, 'JSON data (the task travels through Redis)', payload);
    return { id: id as string, input, payload: JSON.parse(json) as unknown };
  });
}
