// A BullMQ batch whose strict total cap pauses (`whenSpent: 'pause'`): runs that meet the cap
// park on their worker holding no slot, tasks not started wait, and a raise (the producer's
// handle, attachBatch's) lets them go on. Real Redis, workers in this process.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { InvalidArgumentError } from 'agent-state-machine';
import { loadHistory, validateHistory } from 'agent-state-machine/history';
import { Redis } from 'ioredis';
import {
  attachBatch,
  raiseBatch,
  startBatchWorker,
  submitBatch,
  type BatchWorkerHandle,
  type DistributedTask,
  type PriceTable,
} from '../../../lib/integrations/bullmq/index';
import { batchKeys } from '../../../lib/integrations/bullmq/batchKeys';
import { deletePrefix, releaseRedis, testRedisUrl, uniquePrefix } from '../../helpers/redis';
import { agentFromPayload, type TestPayload } from './fixtures/agentFromPayload';
import { watchSpend, waitUntilPaused } from './fixtures/pausedBatch';

let url: string;
beforeAll(async () => {
  url = await testRedisUrl();
});
afterAll(() => releaseRedis());

// Dollars of 1/1024 and 4/1024 a token: every cost, hold and sum is exact in binary.
const PRICES: PriceTable = { '*': { inputPerMTok: 1e6 / 1024, outputPerMTok: 4e6 / 1024 } };
/** Each call holds (100 + 4·50)/1024 = $0.29296875 and costs (100 + 4·10)/1024 = $0.13671875. */
const PAYLOAD: TestPayload = {
  steps: 2,
  delayMs: 5,
  tokens: { inputTokens: 100, maxOutputTokens: 50, outputTokens: [10, 10] },
};
const CALL = 140 / 1024;

const tasks = (n: number, label = 't'): DistributedTask[] =>
  Array.from({ length: n }, (_, i) => ({ id: `${label}${i}`, input: `task ${i}`, payload: PAYLOAD }));

function setup(label: string) {
  const prefix = uniquePrefix(label);
  const workers: BatchWorkerHandle[] = [];
  const dirs: string[] = [];
  const redis = new Redis(url);
  return {
    prefix,
    redis,
    worker(options: Partial<Parameters<typeof startBatchWorker>[0]> = {}) {
      const w = startBatchWorker({
        connection: url,
        name: 'runs',
        prefix,
        agent: (task) => agentFromPayload(task.payload),
        onError: false,
        ...options,
      });
      workers.push(w);
      return w;
    },
    tmp() {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'asm-bullpause-'));
      dirs.push(dir);
      return dir;
    },
    async cleanup() {
      await Promise.all(workers.map((w) => w.close()));
      redis.disconnect();
      await deletePrefix(url, prefix);
      for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

describe("submitBatch({ total: { maxCostUsd, whenSpent: 'pause' } })", () => {
  it('parks runs at the cap holding no slot (another batch runs meanwhile), and goes on when the handle raises it; spend never passes the cap in force', async () => {
    const t = setup('pause');
    try {
      const dir = t.tmp();
      // One slot: the third task's second call does not fit under $0.75.
      t.worker({ workerId: 'w1', concurrency: 1, historyDir: dir, journal: true });
      const batch = await submitBatch(tasks(6), {
        connection: url,
        name: 'runs',
        prefix: t.prefix,
        pricing: PRICES,
        total: { maxCostUsd: 0.75, whenSpent: 'pause' },
      });
      const keys = batchKeys(t.prefix, 'runs', batch.batchId);
      const spend = watchSpend(t.redis, keys.budget);
      await waitUntilPaused(t.redis, keys.budget, 0);
      expect(Number(await t.redis.hget(keys.budget, 'c'))).toBe(4 * CALL);

      // The worker's one slot is free (the parked run holds none, the tasks not started wait):
      // another batch on the queue runs to its end meanwhile.
      const other = await submitBatch(tasks(3, 'o'), {
        connection: url,
        name: 'runs',
        prefix: t.prefix,
        pricing: PRICES,
      });
      const otherReport = await other.report();
      expect(otherReport.totals.outcomes.end_of_turn).toBe(3);
      expect(batch.progress().done).toBe(2);

      // A raise that does not raise is refused, naming the cap in force and what is spent and held.
      await expect(batch.raise({ maxCostUsd: 0.5 })).rejects.toThrow(InvalidArgumentError);
      await expect(batch.raise({ maxCostUsd: 0.75 })).rejects.toThrow(
        /Expected `maxCostUsd` to be a cap above the one in force \(\$0\.7500, with \$0\.\d+ spent and \$0\.\d+ held under it\): a cap is raised, never lowered/,
      );
      const raised = await batch.raise({ maxCostUsd: 2 });
      expect(raised).toMatchObject({ fromUsd: 0.75, toUsd: 2, by: 'handle' });

      const report = await batch.report();
      await spend.stop();
      expect(report.totals.outcomes.end_of_turn).toBe(6);
      expect(report.totals.costUsd).toBe(12 * CALL);
      expect(report.budget.costUsd).toBe(12 * CALL);
      expect(report.limits.total).toEqual({ maxCostUsd: 0.75, whenSpent: 'pause' });
      expect(report.raises).toEqual([{ at: raised.at, fromUsd: 0.75, toUsd: 2, by: 'handle' }]);
      // The runs that met the cap say so; their files are whole and valid.
      const waited = report.runs.filter((r) => r.capWait !== undefined);
      expect(waited.map((r) => r.id)).toEqual(['t2']);
      for (const run of waited) expect(run.capWait!.pauses).toBeGreaterThanOrEqual(1);
      for (const run of report.runs) {
        const loaded = await loadHistory(run.historyFile!);
        expect(validateHistory(loaded.entries)).toMatchObject({ ok: true });
      }
      // Spend never passed the cap in force, at any reading.
      expect(spend.readings()).toBeGreaterThan(0);
      expect(spend.overCap()).toEqual([]);
      expect(await t.redis.hget(keys.budget, 'hc')).toBeNull();
    } finally {
      await t.cleanup();
    }
  }, 60_000);

  it('attachBatch(…).raise and raiseBatch() raise it from another handle; a batch that stops at its cap is refused', async () => {
    const t = setup('attachraise');
    try {
      t.worker({ workerId: 'w1', concurrency: 3 });
      const batch = await submitBatch(tasks(5), {
        connection: url,
        name: 'runs',
        prefix: t.prefix,
        pricing: PRICES,
        batchId: 'paused-1',
        total: { maxCostUsd: 0.6, whenSpent: 'pause' },
      });
      const keys = batchKeys(t.prefix, 'runs', batch.batchId);
      await waitUntilPaused(t.redis, keys.budget, 0);
      const attached = await attachBatch({ connection: url, name: 'runs', prefix: t.prefix, batchId: 'paused-1' });
      await attached.raise({ maxCostUsd: 0.9 });
      // Found by its id alone (the one queue that holds it).
      await waitUntilPaused(t.redis, keys.budget, 1);
      const byId = await raiseBatch({ connection: url, batchId: 'paused-1', maxCostUsd: 5 });
      expect(byId).toMatchObject({ fromUsd: 0.9, toUsd: 5, by: 'redis', name: 'runs', prefix: t.prefix });
      const [report, seen] = await Promise.all([batch.report(), attached.report()]);
      expect(report.totals.outcomes.end_of_turn).toBe(5);
      expect(report.raises!.map((r) => [r.fromUsd, r.toUsd, r.by])).toEqual([
        [0.6, 0.9, 'handle'],
        [0.9, 5, 'redis'],
      ]);
      expect(seen.raises).toEqual(report.raises);

      const stopping = await submitBatch(tasks(1, 's'), {
        connection: url,
        name: 'runs',
        prefix: t.prefix,
        pricing: PRICES,
        total: { maxCostUsd: 1 },
      });
      await expect(stopping.raise({ maxCostUsd: 2 })).rejects.toThrow(/whenSpent: 'pause'.*stops at its cap/);
      await stopping.report();
    } finally {
      await t.cleanup();
    }
  }, 60_000);

  it('refuses by name what it cannot honour: a pause without a strict cap, or beside maxWallMs', async () => {
    const base = { connection: url, name: 'runs', prefix: uniquePrefix('pauserefuse') };
    await expect(submitBatch(tasks(1), { ...base, total: { whenSpent: 'pause' } })).rejects.toThrow(
      /total\.whenSpent.*strict cap/,
    );
    await expect(
      submitBatch(tasks(1), { ...base, total: { maxCostUsd: 1, strict: false, whenSpent: 'pause' } }),
    ).rejects.toThrow(/total\.whenSpent.*strict cap/);
    await expect(
      submitBatch(tasks(1), { ...base, total: { maxCostUsd: 1, maxWallMs: 1000, whenSpent: 'pause' } }),
    ).rejects.toThrow(/total\.maxWallMs.*whenSpent: 'pause'/);
    await expect(
      submitBatch(tasks(1), { ...base, total: { maxCostUsd: 1, whenSpent: 'later' as never } }),
    ).rejects.toThrow(/total\.whenSpent.*'pause' or 'stop'/);
  });
});
