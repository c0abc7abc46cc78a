import { Queue } from 'bullmq';
import { InvalidArgumentError, type CapRaise } from 'agent-state-machine';
import { assertKnownOptions } from 'agent-state-machine/internal';
import { keysOn, OPTION_DEFAULTS } from '../../internal/optionTable';
import { batchKeys, isBatchId } from './batchKeys';
import { assertMs, assertQueueName, bounded, openRedis, type RedisConnection } from './connection';
import { raiseCap } from './raiseCap';
import { findBatch } from './findBatch';

/** Options of `raiseBatch(options)`. */
export interface RaiseBatchOptions {
  /** Redis: a URL, ioredis options or an ioredis client (duplicated, never closed). */
  connection: RedisConnection;
  /** The batch's id. */
  batchId: string;
  /** The new cap in USD: above the one in force. */
  maxCostUsd: number;
  /** The queue the batch was submitted to. Default: the one queue in Redis that holds a batch of this id. */
  name?: string;
  /** BullMQ's key prefix, with `name`. Default `bull`; found with the queue when `name` is left out. */
  prefix?: string;
  /** How long each Redis operation waits for an unreachable Redis. Default 10,000 ms. */
  timeoutMs?: number;
}

const RAISE_OPTION_KEYS = keysOn('raise');

/**
 * Raises the dollar cap of a BullMQ batch paused at it (submitted with `total: { maxCostUsd,
 * whenSpent: 'pause' }`), from any process: what `handle.raise()` does, without a handle (and
 * what `agent-sm raise --redis URL --batch ID --total-usd N` runs). Resolves with the raise,
 * as the batch's report will list it, and where the batch is.
 */
export async function raiseBatch(options: RaiseBatchOptions): Promise<CapRaise & { name: string; prefix: string }> {
  if (typeof options !== 'object' || options === null)
    throw new InvalidArgumentError('options', 'an object { connection, batchId, maxCostUsd, … }', options);
  assertKnownOptions(options, RAISE_OPTION_KEYS, 'raiseBatch()');
  const { connection, batchId, maxCostUsd, timeoutMs = OPTION_DEFAULTS.timeoutMs } = options;
  if (!isBatchId(batchId)) throw new InvalidArgumentError('batchId', "a batch's id", batchId);
  if (options.name !== undefined) assertQueueName(options.name);
  if (options.prefix !== undefined && (typeof options.prefix !== 'string' || options.prefix === ''))
    throw new InvalidArgumentError('prefix', "BullMQ's key prefix (a non-empty string)", options.prefix);
  assertMs('timeoutMs', timeoutMs);
  const redis = openRedis(connection);
  const within = <T>(what: string, operation: () => Promise<T>): Promise<T> =>
    bounded(redis, `raiseBatch: batch ${batchId}: ${what}`, operation, timeoutMs);
  let queue: Queue | undefined;
  try {
    const where =
      options.name !== undefined
        ? { prefix: options.prefix ?? 'bull', name: options.name }
        : await findBatch(redis, batchId, options.prefix, within);
    queue = new Queue(where.name, { connection: redis, prefix: where.prefix });
    queue.on('error', () => undefined);
    const keys = batchKeys(where.prefix, where.name, batchId);
    const raise = await raiseCap({ redis, queue, keys, ...where, batchId }, { maxCostUsd }, 'redis', within);
    return { ...raise, ...where };
  } finally {
    await Promise.race([queue?.close().catch(() => undefined), new Promise((r) => setTimeout(r, 1000).unref())]);
    redis.disconnect();
  }
}
