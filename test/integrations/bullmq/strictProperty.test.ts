import fc from 'fast-check';
import { runBatch } from 'agent-state-machine';
import { batchKeys } from '../../../lib/integrations/bullmq/batchKeys';
import {
  startBatchWorker,
  submitBatch,
  type BatchWorkerHandle,
  type DistributedTask,
  type PriceTable,
} from '../../../lib/integrations/bullmq/index';
import { pricingFromTable } from '../../../lib/integrations/bullmq/PriceTable';
import { useFileRedis } from '../../helpers/redis';
import { agentFromPayload, type TestPayload } from './fixtures/agentFromPayload';

const redis = useFileRedis('strictprop');

/**
 * A small random batch: tasks of 1–3 calls, each bounded by its input tokens and max output
 * tokens and reporting at most that bound; prices and the cap in 1/1024 dollars, so that every
 * sum is exact and "never past the cap" needs no tolerance.
 */
const batches = fc.record({
  capUnits: fc.integer({ min: 0, max: 1500 }),
  inputPrice: fc.integer({ min: 1, max: 4 }),
  outputPrice: fc.integer({ min: 1, max: 8 }),
  tasks: fc.array(
    fc.record({
      inputTokens: fc.integer({ min: 1, max: 60 }),
      maxOutputTokens: fc.integer({ min: 1, max: 60 }),
      used: fc.array(fc.integer({ min: 0, max: 100 }), { minLength: 1, maxLength: 3 }),
      delayMs: fc.integer({ min: 0, max: 3 }),
    }),
    { minLength: 1, maxLength: 8 },
  ),
  concurrency: fc.integer({ min: 1, max: 4 }),
  workers: fc.integer({ min: 1, max: 2 }),
});
type RandomBatch = typeof batches extends fc.Arbitrary<infer T> ? T : never;

function setUp(b: RandomBatch): { cap: number; prices: PriceTable; tasks: DistributedTask[] } {
  const prices: PriceTable = {
    '*': { inputPerMTok: (b.inputPrice * 1e6) / 1024, outputPerMTok: (b.outputPrice * 1e6) / 1024 },
  };
  const tasks = b.tasks.map((t, i): DistributedTask => {
    const payload: TestPayload = {
      steps: t.used.length,
      delayMs: t.delayMs,
      tokens: {
        inputTokens: t.inputTokens,
        maxOutputTokens: t.maxOutputTokens,
        outputTokens: t.used.map((pct) => Math.floor((t.maxOutputTokens * pct) / 100)),
      },
    };
    return { id: `t${i}`, input: `task ${i}`, payload };
  });
  return { cap: b.capUnits / 1024, prices, tasks };
}

let n = 0;

describe('a strict total dollar cap over random batches (property-based)', () => {
  it('in process (runBatch) and across workers (submitBatch, startBatchWorker): spend never passes the cap, and no hold is left', async () => {
    await fc.assert(
      fc.asyncProperty(batches, async (b) => {
        const { cap, prices, tasks } = setUp(b);
        const total = { maxCostUsd: cap, strict: true };

        // In process: the same tasks, the same total concurrency.
        const local = await runBatch(
          tasks.map((t) => ({ id: t.id, input: t.input, agent: () => agentFromPayload(t.payload) })),
          { concurrency: b.concurrency * b.workers, total, pricing: pricingFromTable(prices), logger: false },
        );
        expect(local.totals.costUsd).toBeLessThanOrEqual(cap);
        expect(local.runs.reduce((s, r) => s + r.usage.costUsd, 0)).toBeLessThanOrEqual(cap);

        // Distributed: 1–2 workers on a queue of this case's own.
        const name = `q${n++}`;
        const workers: BatchWorkerHandle[] = Array.from({ length: b.workers }, (_, w) =>
          startBatchWorker({
            connection: redis.url,
            name,
            prefix: redis.prefix,
            workerId: `w${w}`,
            concurrency: b.concurrency,
            agent: (task) => agentFromPayload(task.payload),
            onError: false,
          }),
        );
        try {
          const report = await (
            await submitBatch(tasks, { connection: redis.url, name, prefix: redis.prefix, pricing: prices, total })
          ).report();
          expect(report.budget.costUsd).toBeLessThanOrEqual(cap);
          expect(report.runs.reduce((s, r) => s + r.usage.costUsd, 0)).toBe(report.budget.costUsd);
          expect(report.runs).toHaveLength(tasks.length);
          // Every run ended by the cap names it; nothing else went wrong.
          expect(report.totals.outcomes.error).toBe(0);
          expect(local.totals.outcomes.error).toBe(0);
          const keys = batchKeys(redis.prefix, name, report.batchId);
          expect(await redis.client.hget(keys.budget, 'hc')).toBeNull();
          expect(Object.keys(await redis.client.hgetall(keys.runUsage)).filter((f) => f.endsWith(':hc'))).toEqual([]);
        } finally {
          await Promise.all(workers.map((w) => w.close()));
        }
      }),
      { numRuns: 40 },
    );
  }, 60_000);
});
