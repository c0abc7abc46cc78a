// A BullMQ worker whose job lock lapses when the test says, not on its own: its lock duration is
// far too long to lapse during a test, and `lapseLock` deletes the one lock key, as an expiry
// would (a stalled worker, a partition). BullMQ's stalled check, every 100 ms, then hands the
// job to another worker. The zombie and takeover tests of the distributed batch use both.
import type { Redis } from 'ioredis';
import { startBatchWorker, type BatchWorkerHandle, type BatchWorkerOptions } from '../../lib/integrations/bullmq/index';

/** One run at a time on queue `runs`, its lock lapsing only through `lapseLock`. */
export function lapsingWorker(
  options: Omit<BatchWorkerOptions, 'name' | 'concurrency' | 'lockDurationMs' | 'stalledIntervalMs'>,
): BatchWorkerHandle {
  return startBatchWorker({
    ...options,
    name: 'runs',
    concurrency: 1,
    lockDurationMs: 120_000,
    stalledIntervalMs: 100,
  });
}

/** Deletes the lock of the one job a `lapsingWorker` of `prefix` holds; fails unless there is exactly one. */
export async function lapseLock(redis: Redis, prefix: string): Promise<void> {
  const locks = await redis.keys(`${prefix}:runs:*:lock`);
  if (locks.length !== 1) throw new Error(`expected one job lock under ${prefix}, found ${locks.length}`);
  await redis.del(locks[0]!);
}
