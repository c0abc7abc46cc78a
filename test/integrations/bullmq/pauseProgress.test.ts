// submitBatch's `onPause` on a batch paused at its cap, with workers in their own processes: it
// is called once, with the batch's figures read from Redis, and its `raise` lets the batch go
// on; the producer's progress does not count the runs parked at the cap as in flight. Real Redis.
import type { ChildProcess } from 'node:child_process';
import type { BatchPause, BatchProgress } from 'agent-state-machine';
import { Redis } from 'ioredis';
import { batchKeys } from '../../../lib/integrations/bullmq/batchKeys';
import { submitBatch, type DistributedTask, type PriceTable } from '../../../lib/integrations/bullmq/index';
import { spawnWorker, stopAll } from './fixtures/spawnWorker';
import { deletePrefix, releaseRedis, testRedisUrl, uniquePrefix } from '../../helpers/redis';
import type { TestPayload } from './fixtures/agentFromPayload';

let url: string;
beforeAll(async () => {
  url = await testRedisUrl();
});
afterAll(() => releaseRedis());

// Dollars of 1/1024 and 4/1024 a token: each call holds $0.29296875 and costs $0.13671875.
const PRICES: PriceTable = { '*': { inputPerMTok: 1e6 / 1024, outputPerMTok: 4e6 / 1024 } };
const CALL = 140 / 1024;
const PAYLOAD: TestPayload = {
  steps: 2,
  delayMs: 20,
  tokens: { inputTokens: 100, maxOutputTokens: 50, outputTokens: [10, 10] },
};
const tasks: DistributedTask[] = Array.from({ length: 6 }, (_, i) => ({
  id: `t${i}`,
  input: `task ${i}`,
  payload: PAYLOAD,
}));

async function until(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe("submitBatch({ total: { maxCostUsd, whenSpent: 'pause' }, onPause })", () => {
  it('calls onPause once with the figures; parked runs are not in flight in the progress; its raise lets the batch go on', async () => {
    const prefix = uniquePrefix('pauseprogress');
    const workers: ChildProcess[] = [];
    const redis = new Redis(url);
    try {
      const env = { REDIS_URL: url, QUEUE: 'runs', PREFIX: prefix, CONCURRENCY: '1' };
      workers.push(...(await Promise.all(['p1', 'p2'].map((id) => spawnWorker({ ...env, WORKER_ID: id })))));
      const pauses: BatchPause[] = [];
      const progress: BatchProgress[] = [];
      const batch = await submitBatch(tasks, {
        connection: url,
        name: 'runs',
        prefix,
        pricing: PRICES,
        total: { maxCostUsd: 0.75, whenSpent: 'pause' },
        onPause: (pause) => void pauses.push(pause),
        onProgress: (p) => void progress.push(p),
      });
      const keys = batchKeys(prefix, 'runs', batch.batchId);
      // Paused: once onPause is told, no run starts until a raise, and each in flight ends or parks.
      await until('the pause', () => pauses.length === 1);
      await until('no run in flight', () => batch.progress().running === 0);
      const parked = new Set<number>();
      for (const p of progress)
        if (p.event.type === 'parked') parked.add(p.event.index);
        else if (p.event.type === 'finished' || p.event.type === 'unparked') parked.delete(p.event.index);
      expect(parked.size).toBeGreaterThan(0);
      // What Redis holds agrees: the runs started and not reported are the parked ones.
      const started = Object.keys(await redis.hgetall(keys.started)).map(Number);
      const reported = new Set(Object.keys(await redis.hgetall(keys.results)).map(Number));
      expect(started.filter((i) => !reported.has(i)).sort()).toEqual([...parked].sort());
      expect(batch.progress().done).toBeLessThan(6);

      const [pause] = pauses;
      expect(pause).toMatchObject({ capUsd: 0.75 });
      expect(pause!.spentUsd % CALL).toBe(0);
      expect(pause!.spentUsd).toBeGreaterThan(0);
      expect(pause!.spentUsd + pause!.heldUsd).toBeLessThanOrEqual(0.75);
      pause!.raise({ maxCostUsd: 10 });

      const report = await batch.report();
      expect(report.totals.outcomes.end_of_turn).toBe(6);
      expect(report.budget.costUsd).toBe(12 * CALL);
      expect(report.raises).toEqual([expect.objectContaining({ fromUsd: 0.75, toUsd: 10, by: 'handle' })]);
      expect(pauses).toHaveLength(1);
      expect(progress.some((p) => p.event.type === 'unparked')).toBe(true);
      expect(progress.at(-1)).toMatchObject({ done: 6, running: 0 });
      process.stdout.write(
        `onPause: cap $${pause!.capUsd}, spent $${pause!.spentUsd}, held $${pause!.heldUsd}; ${parked.size} parked, 0 in flight\n`,
      );
    } finally {
      redis.disconnect();
      await stopAll(workers);
      await deletePrefix(url, prefix);
    }
  }, 60_000);

  it("refuses onPause unless total.whenSpent is 'pause', and one that is not a function, before it connects", async () => {
    const opts = { connection: 'redis://127.0.0.1:1', name: 'q' };
    await expect(submitBatch([], { ...opts, total: { maxCostUsd: 1 }, onPause: () => undefined })).rejects.toThrow(
      /^Expected `onPause` to be left out unless `total\.whenSpent` is 'pause'/,
    );
    await expect(
      submitBatch([], {
        ...opts,
        total: { maxCostUsd: 1, whenSpent: 'pause' },
        onPause: 'raise' as unknown as () => void,
      }),
    ).rejects.toThrow(/^Expected `onPause` to be a function/);
  });
});
