import {
  startBatchWorker,
  submitBatch,
  type BatchWorkerHandle,
  type DistributedTask,
} from '../../../lib/integrations/bullmq/index';
import { startOwnRedis, type OwnRedis } from '../../helpers/redis';
import { agentFromPayload } from './fixtures/agentFromPayload';

// A redis-server of this test's own, on a free port: it is killed and started again mid-batch.
// The shared Redis is never restarted.
let redis: OwnRedis;
afterEach(async () => {
  await redis?.stop();
});

const tasks = (n: number): DistributedTask[] =>
  Array.from({ length: n }, (_, i) => ({
    id: `t${i}`,
    input: `task ${i}`,
    payload: { steps: 2, costUsd: 0.01, delayMs: 30 },
  }));

describe('submitBatch() when Redis restarts mid-batch', () => {
  // A job whose fetch reply was lost in the crash sits in BullMQ's active list with nobody
  // running it until the stalled check gives it back: within lockDurationMs + stalledIntervalMs.
  it('with appendonly (fsync always), a crash and restart loses nothing: every task reported once, the budget counts kept', async () => {
    redis = await startOwnRedis(['--appendonly', 'yes', '--appendfsync', 'always']);
    const workers: BatchWorkerHandle[] = [];
    try {
      for (let i = 0; i < 2; i++) {
        workers.push(
          startBatchWorker({
            connection: redis.url,
            name: 'runs',
            concurrency: 3,
            lockDurationMs: 4000,
            stalledIntervalMs: 1000,
            agent: (task) => agentFromPayload(task.payload),
            onError: false,
          }),
        );
      }
      let restarted: Promise<void> | undefined;
      const batch = await submitBatch(tasks(40), {
        connection: redis.url,
        name: 'runs',
        total: { maxCostUsd: 100, strict: false },
        onProgress: (p) => {
          if (restarted === undefined && p.done >= 10) {
            restarted = (async () => {
              await redis.kill();
              await new Promise((r) => setTimeout(r, 300));
              await redis.start();
            })();
          }
        },
      });
      const report = await batch.report();
      await restarted;
      expect(restarted).toBeDefined();
      expect(report.runs.map((r) => r.id)).toEqual(tasks(40).map((t) => t.id));
      expect(report.totals.outcomes.end_of_turn).toBe(40);
      expect(report.runs.every((r) => r.attempt === 1)).toBe(true);
      // The shared budget survived: it counted every call the runs report (a charge resent after
      // the reconnect could only count more, never less).
      expect(report.budget.llmCalls).toBeGreaterThanOrEqual(report.totals.llmCalls);
      expect(report.budget.costUsd).toBeGreaterThanOrEqual(report.totals.costUsd - 1e-9);
    } finally {
      await Promise.all(workers.map((w) => w.close()));
    }
  }, 60_000);

  it('without persistence, report() rejects saying the batch is gone, instead of waiting for ever', async () => {
    redis = await startOwnRedis();
    const worker = startBatchWorker({
      connection: redis.url,
      name: 'runs',
      concurrency: 2,
      agent: (task) => agentFromPayload(task.payload),
      onError: false,
    });
    try {
      let restarted: Promise<void> | undefined;
      const batch = await submitBatch(tasks(40), {
        connection: redis.url,
        name: 'runs',
        onProgress: (p) => {
          if (restarted === undefined && p.done >= 5) {
            restarted = (async () => {
              await redis.kill();
              await redis.start();
            })();
          }
        },
      });
      await expect(batch.report()).rejects.toThrow(
        /its keys are gone from Redis .* Redis restarted without persistence/,
      );
      await restarted;
    } finally {
      await worker.close();
    }
  }, 30_000);
});
