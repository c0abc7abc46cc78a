// One distributed run taken over: the first of two real workers runs the task's agent until the
// test says it is lost, its job lock lapses (`lapseLock`), and the second worker takes the run
// over and ends it. Real Redis, a FileStore; the takeover tests of the distributed batch use it.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { AgentLoop } from 'agent-state-machine';
import { FileStore } from 'agent-state-machine/batch';
import { Redis } from 'ioredis';
import { submitBatch, type BatchWorkerHandle, type DistributedRunReport } from '../../lib/integrations/bullmq/index';
import { deletePrefix, uniquePrefix } from './redis';
import { lapseLock, lapsingWorker } from './lapsingWorker';

/** What the test sees of the scene: the store's folder, a Redis client, the key prefix and the batch. */
export interface TakeoverScene {
  readonly dir: string;
  readonly redis: Redis;
  readonly prefix: string;
  readonly batchId: string;
}

export interface TakenOverOptions {
  /** The task's agent, made once per attempt: `attempt` 1 is the first worker's. */
  agent: (attempt: number) => AgentLoop;
  /** Resolves when the first attempt is where it is lost. */
  lost: () => Promise<void>;
  /** The wait before a call is retried. Default 1 ms. */
  retryDelayMs?: number;
  /** What to wait for, or check, between the loss and the lock's lapse. */
  beforeLapse?: (scene: TakeoverScene) => Promise<void>;
  /** Lets the lost attempt go, before the workers close, whatever happened (as a stalled worker would wake). */
  letGo?: () => void;
}

/**
 * Runs task `t0` to its end through a takeover and hands its report (attempt 2, by the worker
 * `takeover`) to `check`, with the scene still standing; everything is taken down after.
 */
export async function takenOver<T>(
  url: string,
  options: TakenOverOptions,
  check: (run: DistributedRunReport, scene: TakeoverScene) => T | Promise<T>,
): Promise<T> {
  const prefix = uniquePrefix('takenover');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'asm-taken-over-'));
  const redis = new Redis(url);
  const workers: BatchWorkerHandle[] = [];
  let attempts = 0;
  const start = (id: string): BatchWorkerHandle =>
    lapsingWorker({
      connection: url,
      prefix,
      workerId: id,
      store: new FileStore(dir),
      journal: true,
      // $5 a million tokens: a call bounded at 2,000 tokens holds $0.01; an answer of 120 tokens is billed $0.0006.
      pricing: (u) => ((u.inputTokens ?? 0) + (u.outputTokens ?? 0)) * 5e-6,
      closeTimeoutMs: 500,
      onError: () => undefined,
      agent: () => options.agent(++attempts),
    });
  try {
    workers.push(start('first'));
    const delay = options.retryDelayMs ?? 1;
    const batch = await submitBatch([{ id: 't0', input: 'go' }], {
      connection: url,
      name: 'runs',
      prefix,
      retry: { retries: 2, baseDelayMs: delay, maxDelayMs: delay },
      retryLostRuns: 1,
      total: { maxCostUsd: 1, strict: true },
    });
    const scene: TakeoverScene = { dir, redis, prefix, batchId: batch.batchId };
    await options.lost();
    await options.beforeLapse?.(scene);
    await lapseLock(redis, prefix);
    workers.push(start('takeover'));
    const [run] = (await batch.report()).runs;
    if (run === undefined) throw new Error('the batch reported no run');
    return await check(run, scene);
  } finally {
    options.letGo?.();
    await Promise.all(workers.map((w) => w.close()));
    redis.disconnect();
    await deletePrefix(url, prefix);
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
