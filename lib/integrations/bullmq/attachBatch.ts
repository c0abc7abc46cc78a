import { Queue } from 'bullmq';
import { assertKnownOptions } from 'agent-state-machine/internal';
import { InvalidArgumentError, type BatchProgress } from 'agent-state-machine';
import { ATTACH_OPTION_KEYS } from './optionKeys';
import { batchKeys, isBatchId } from './batchKeys';
import { assertMs, assertQueueName, bounded, openRedis, addressOf, type RedisConnection } from './connection';
import { parseBatchMeta } from './runRecords';
import { EXPIRE_CODE } from './scripts';
import type { BatchHandle } from './BatchHandle';
import { trackBatch } from './trackBatch';
import { answeredBy, assertOnApproval, type DistributedApprovalRequest } from './approvalNotice';
import { OPTION_DEFAULTS } from '../../internal/optionTable';

/** Options of `attachBatch(options)`. */
export interface AttachBatchOptions {
  /** Redis: a URL, ioredis options or an ioredis client (duplicated, never closed). */
  connection: RedisConnection;
  /** The queue the batch was submitted to. */
  name: string;
  /** BullMQ's key prefix. Default `bull`. */
  prefix?: string;
  /** The batch's id (`submitBatch({ batchId })`, or `handle.batchId`). */
  batchId: string;
  /** Called as runs start and end, from the batch's first event on. A throw is caught and ignored. */
  onProgress?: (progress: BatchProgress) => void;
  /**
   * Called for each run parked for approval (`startBatchWorker({ approve })`, or a framework's
   * own with `drive`: AI SDK `needsApproval`) whose request is still open, as `submitBatch`'s
   * `onApproval` is: this process may answer it, whichever process submitted the batch. A call answered elsewhere first is refused here by name.
   */
  onApproval?: (request: DistributedApprovalRequest) => void | Promise<void>;
  /** How often the workers' reports are read. Default 100 ms. */
  pollMs?: number;
  /** How long each Redis operation waits for an unreachable Redis. Default 10,000 ms. */
  timeoutMs?: number;
  /** Once the report is built here, the batch's keys expire after this (unless it was submitted with `keepKeys`). Default 86,400,000 ms (a day). */
  expireAfterMs?: number;
  /** Where the report is written as JSON once it is built. */
  reportFile?: string;
  /** Aborting aborts the batch (as `handle.abort()` does). */
  signal?: AbortSignal;
}

/**
 * A handle on a batch submitted by another process (or by one that is gone): its progress,
 * its report (the runs reported so far and those still to come) and abort — the same handle
 * `submitBatch` returns. Rejects when no such batch is in Redis.
 */
export async function attachBatch(options: AttachBatchOptions): Promise<BatchHandle> {
  if (typeof options !== 'object' || options === null)
    throw new InvalidArgumentError('options', 'an object { connection, name, batchId, … }', options);
  assertKnownOptions(options, ATTACH_OPTION_KEYS, 'attachBatch()');
  const {
    connection,
    name,
    prefix = 'bull',
    batchId,
    onProgress,
    onApproval,
    pollMs = OPTION_DEFAULTS.pollMs,
    timeoutMs = OPTION_DEFAULTS.timeoutMs,
    expireAfterMs = OPTION_DEFAULTS.expireAfterMs,
    reportFile,
    signal,
  } = options;
  assertQueueName(name);
  if (!isBatchId(batchId)) throw new InvalidArgumentError('batchId', "a batch's id", batchId);
  if (onProgress !== undefined && typeof onProgress !== 'function')
    throw new InvalidArgumentError('onProgress', 'a function (progress) => void', onProgress);
  assertOnApproval(onApproval);
  assertMs('pollMs', pollMs);
  assertMs('timeoutMs', timeoutMs);
  assertMs('expireAfterMs', expireAfterMs);
  if (signal !== undefined && !(signal instanceof AbortSignal))
    throw new InvalidArgumentError('signal', 'an AbortSignal', signal);
  if (reportFile !== undefined && (typeof reportFile !== 'string' || reportFile === ''))
    throw new InvalidArgumentError('reportFile', 'a file path', reportFile);

  const redis = openRedis(connection);
  const keys = batchKeys(prefix, name, batchId);
  let queue: Queue | undefined;
  try {
    const [metaJson, idsJson, expiry] = await bounded(
      redis,
      `attachBatch: reading batch ${batchId}`,
      () => Promise.all([redis.get(keys.meta), redis.get(keys.ids), redis.hget(keys.budget, EXPIRE_CODE)]),
      timeoutMs,
      signal,
    );
    if (metaJson === null || idsJson === null)
      throw new Error(
        `no batch ${batchId} on queue ${name} (prefix ${prefix}) in Redis at ${addressOf(redis)}: never submitted, or its keys expired`,
      );
    const meta = parseBatchMeta(metaJson);
    queue = new Queue(name, { connection: redis, prefix });
    queue.on('error', () => undefined);
    const tracked = trackBatch({
      redis,
      queue,
      prefix,
      name,
      batchId,
      keys,
      ids: JSON.parse(idsJson) as string[],
      perRun: meta.perRun,
      total: meta.total,
      timeoutMs,
      pollMs,
      // A batch submitted with keepKeys keeps them.
      expireAfterMs: expiry === null ? undefined : expireAfterMs,
      reportFile,
      signal,
      onProgress,
      onApproval,
      answeredBy: answeredBy('attachBatch'),
    });
    // What the batch did before this handle existed is counted before it is handed out.
    await tracked.caughtUp;
    return tracked.handle;
  } catch (error) {
    await queue?.close().catch(() => undefined);
    redis.disconnect();
    throw error;
  }
}
