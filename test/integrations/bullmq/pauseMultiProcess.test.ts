// A BullMQ batch paused at its cap, raised from another process by the built `agent-sm raise
// --redis` (a child process): with the producer running, and with the producer killed
// (SIGKILL) while paused and started again. Workers and producers in their own processes;
// spend is read from Redis all along and never passes the cap in force.
import type { ChildProcess } from 'node:child_process';
import { Redis } from 'ioredis';
import { batchKeys } from '../../../lib/integrations/bullmq/batchKeys';
import { submitBatch, type PriceTable } from '../../../lib/integrations/bullmq/index';
import { buildCli, buildLibrary, runBuiltCli } from '../../helpers/builtCli';
import { deletePrefix, releaseRedis, testRedisUrl, uniquePrefix } from '../../helpers/redis';
import { waitUntilPaused, watchSpend } from './fixtures/pausedBatch';
import { spawnFixture } from './fixtures/spawnFixture';
import { stopAll as kill } from './fixtures/spawnWorker';

const CALL = 140 / 1024;

let url: string;
beforeAll(async () => {
  url = await testRedisUrl();
  buildCli();
  buildLibrary({ index: 'lib/index.ts', 'bullmq/index': 'lib/integrations/bullmq/index.ts' });
}, 120_000);
afterAll(() => releaseRedis());

interface Report {
  outcomes: string[];
  costUsd: number;
  totalCostUsd: number;
  raises: Array<[number, number, string]>;
  capWaits: number;
}

describe('agent-sm raise --redis URL --batch ID --total-usd N (built executable) on a paused BullMQ batch', () => {
  it('names a batch that is not there, and one given twice', () => {
    const missing = runBuiltCli(['raise', '--redis', url, '--batch', `nobatch-${process.pid}`, '--total-usd', '2']);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(
      new RegExp(`no batch nobatch-${process.pid} in Redis at \\S+: never submitted, or its keys expired`),
    );
    const twice = runBuiltCli(['raise', 'a', '--redis', url, '--batch', 'b', '--total-usd', '2']);
    expect(twice.code).toBe(2);
    expect(twice.stderr).toContain('give the batch id once: --batch b or a, not both');
  });

  for (const producerKilled of [false, true]) {
    it(
      producerKilled
        ? 'the producer killed (SIGKILL) while paused: raised from the CLI, the workers go on, and the producer started again reports every run and the raise'
        : 'raised from the CLI while its producer waits: every run ends with an answer, spend within the cap in force throughout',
      async () => {
        const prefix = uniquePrefix(producerKilled ? 'pausekill' : 'pausecli');
        const batchId = `paused-${producerKilled ? 'k' : 'c'}`;
        const redis = new Redis(url);
        const children: ChildProcess[] = [];
        const keys = batchKeys(prefix, 'runs', batchId);
        const spend = watchSpend(redis, keys.budget);
        try {
          const env = { REDIS_URL: url, QUEUE: 'runs', PREFIX: prefix, CONCURRENCY: '2' };
          for (const id of ['w1', 'w2']) {
            const w = spawnFixture('workerProcess.ts', { ...env, WORKER_ID: id });
            children.push(w.child);
            await w.line('ready');
          }
          const producerEnv = { ...env, BATCH_ID: batchId, N: '8', CAP: '1' };
          let producer = spawnFixture('pausingProducer.ts', producerEnv);
          children.push(producer.child);
          await waitUntilPaused(redis, keys.budget, 0);
          expect(Number(await redis.hget(keys.budget, 'c'))).toBeLessThanOrEqual(1);
          if (producerKilled) await kill([producer.child]);

          const raised = runBuiltCli(['raise', '--redis', url, '--batch', batchId, '--total-usd', '3']);
          expect(raised.stderr).toBe('');
          expect(raised.code).toBe(0);
          expect(raised.stdout).toContain(
            `agent-sm: raised the cap of batch ${batchId} (queue ${prefix}:runs at ${url}) from $1.0000 to $3.0000; its workers go on`,
          );
          // Lowering is refused by name, with the figures; the cap stays.
          const lower = runBuiltCli(['raise', '--redis', url, '--batch', batchId, '--total-usd', '2']);
          expect(lower.code).toBe(2);
          expect(lower.stderr).toMatch(
            /`maxCostUsd` to be a cap above the one in force \(\$3\.0000, with \$\d\.\d{4} spent and \$\d\.\d{4} held under it\)/,
          );

          if (producerKilled) {
            producer = spawnFixture('pausingProducer.ts', producerEnv);
            children.push(producer.child);
          }
          const report = JSON.parse(await producer.line('report ')) as Report;
          await spend.stop();
          expect(report.outcomes).toEqual(Array.from({ length: 8 }, () => 'end_of_turn'));
          expect(report.costUsd).toBe(16 * CALL);
          expect(report.totalCostUsd).toBe(16 * CALL);
          expect(report.raises).toEqual([[1, 3, 'redis']]);
          expect(report.capWaits).toBeGreaterThanOrEqual(1);
          expect(spend.readings()).toBeGreaterThan(0);
          expect(spend.overCap()).toEqual([]);
        } finally {
          await spend.stop();
          await kill(children);
          redis.disconnect();
          await deletePrefix(url, prefix);
        }
      },
      90_000,
    );
  }

  it('a worker killed (SIGKILL) with a run parked: its lease lapses, another worker reports that run lost with what it spent, and the raise runs the rest', async () => {
    const prefix = uniquePrefix('pauselost');
    const redis = new Redis(url);
    const children: ChildProcess[] = [];
    try {
      const env = {
        REDIS_URL: url,
        QUEUE: 'runs',
        PREFIX: prefix,
        CONCURRENCY: '1',
        LOCK_MS: '1000',
        STALL_MS: '1000',
      };
      const w1 = spawnFixture('workerProcess.ts', { ...env, WORKER_ID: 'w1' });
      children.push(w1.child);
      await w1.line('ready');
      const prices: PriceTable = { '*': { inputPerMTok: 1e6 / 1024, outputPerMTok: 4e6 / 1024 } };
      const payload = {
        steps: 2,
        delayMs: 5,
        tokens: { inputTokens: 100, maxOutputTokens: 50, outputTokens: [10, 10] },
      };
      // One slot, $0.85: t0 and t1 end, t2 makes one call and its second does not fit, t3 waits.
      const batch = await submitBatch(
        Array.from({ length: 4 }, (_, i) => ({ id: `t${i}`, input: `task ${i}`, payload })),
        { connection: url, name: 'runs', prefix, pricing: prices, total: { maxCostUsd: 0.85, whenSpent: 'pause' } },
      );
      const keys = batchKeys(prefix, 'runs', batch.batchId);
      await waitUntilPaused(redis, keys.budget, 0);
      // t3 has been handed out and waits (its index in the waiting set): w1 holds nothing but parked t2.
      while ((await redis.scard(keys.waiting)) === 0) await new Promise((r) => setTimeout(r, 20));
      await kill([w1.child]);
      const w2 = spawnFixture('workerProcess.ts', { ...env, WORKER_ID: 'w2' });
      children.push(w2.child);
      await w2.line('ready');
      // t2's lease lapses: w2 takes its job and reports it lost.
      while ((await redis.hexists(keys.results, '2')) === 0) await new Promise((r) => setTimeout(r, 50));
      await batch.raise({ maxCostUsd: 2 });
      const report = await batch.report();
      expect(report.runs.map((r) => r.outcome)).toEqual(['end_of_turn', 'end_of_turn', 'error', 'end_of_turn']);
      expect(report.runs[2]!.error?.name).toBe('WorkerLostError');
      expect(report.runs[2]!.worker).toBe('w1');
      expect(report.runs[2]!.usage.costUsd).toBe(CALL);
      expect(report.runs[3]!.worker).toBe('w2');
      expect(report.budget.costUsd).toBe(7 * CALL);
    } finally {
      await kill(children);
      redis.disconnect();
      await deletePrefix(url, prefix);
    }
  }, 90_000);
});
