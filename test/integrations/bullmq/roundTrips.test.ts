import { createHash } from 'node:crypto';
import { Redis } from 'ioredis';
import { startBatchWorker, submitBatch, type BatchWorkerHandle } from '../../../lib/integrations/bullmq/index';
import { SKIP, STEP } from '../../../lib/integrations/bullmq/scripts';
import { startOwnRedis, type OwnRedis } from '../../helpers/redis';
import { monitorRedis } from '../../helpers/redisMonitor';
import { agentFromPayload } from './fixtures/agentFromPayload';

// A redis-server of this file's own, watched with MONITOR: every command it sees is this test's.
let redis: OwnRedis;
let worker: BatchWorkerHandle | undefined;
beforeAll(async () => {
  redis = await startOwnRedis();
});
// The worker's close waits for its runs in flight to end (up to closeTimeoutMs, 30 s, then 4 s
// more at most): longer than the default hook timeout of 5 s.
afterAll(async () => {
  await worker?.close();
  await redis.stop();
}, 60_000);

const sha1 = (text: string): string => createHash('sha1').update(text).digest('hex');

/** Counts the calls of each of `scripts` Redis runs while `body` runs. */
async function counting(scripts: Record<string, string>, body: () => Promise<void>): Promise<Record<string, number>> {
  const client = new Redis(redis.url);
  await client.ping();
  const bySha = new Map(Object.entries(scripts).map(([name, lua]) => [sha1(lua), name]));
  const counts: Record<string, number> = Object.fromEntries(Object.keys(scripts).map((k) => [k, 0]));
  let ended!: () => void;
  const endSeen = new Promise<void>((resolve) => (ended = resolve));
  const monitor = await monitorRedis(redis.url, (args) => {
    const command = args[0]?.toLowerCase();
    if (command === 'echo' && args[1] === 'end of count') ended();
    const name =
      command === 'evalsha'
        ? bySha.get(args[1] ?? '')
        : command === 'eval'
          ? bySha.get(sha1(args[1] ?? ''))
          : undefined;
    if (name !== undefined) counts[name]! += 1;
  });
  try {
    await body();
    // MONITOR's stream may trail the replies: an ECHO through it marks the end.
    void client.echo('end of count');
    await endSeen;
  } finally {
    monitor.stop();
    client.disconnect();
  }
  return counts;
}

describe('Redis round trips', () => {
  it('the budget costs one round trip per LLM call, and one more per run for its last charge', async () => {
    worker = startBatchWorker({
      connection: redis.url,
      name: 'q',
      concurrency: 4,
      agent: (task) => agentFromPayload(task.payload),
      onError: false,
    });
    let llmCalls = 0;
    const counts = await counting({ step: STEP }, async () => {
      const tasks = Array.from({ length: 20 }, (_, i) => ({
        id: `t${i}`,
        input: 'x',
        payload: { steps: 4, costUsd: 0.001 },
      }));
      const report = await (
        await submitBatch(tasks, { connection: redis.url, name: 'q', total: { maxCostUsd: 100, strict: false } })
      ).report();
      llmCalls = report.totals.llmCalls;
      // Every charge and every tool call reached the shared budget.
      expect(report.budget.llmCalls).toBe(80);
      expect(report.budget.toolCalls).toBe(60);
      expect(report.budget.costUsd).toBeCloseTo(0.08, 10);
    });
    expect(llmCalls).toBe(80);
    // At most one per LLM call, plus each run's last charge (a run whose last charge rode on
    // another message needs none).
    expect(counts.step).toBeLessThanOrEqual(llmCalls + 20);
    expect(counts.step).toBeGreaterThanOrEqual(llmCalls);
  }, 30_000);

  it('skipped runs are recorded a thousand per round trip', async () => {
    let report: Awaited<ReturnType<Awaited<ReturnType<typeof submitBatch>>['report']>> | undefined;
    const counts = await counting({ skip: SKIP }, async () => {
      const tasks = Array.from({ length: 2500 }, (_, i) => ({
        id: `s${i}`,
        input: 'x',
        payload: { steps: 2, delayMs: 5 },
      }));
      report = await (
        await submitBatch(tasks, { connection: redis.url, name: 'q', total: { maxLlmCalls: 4 } })
      ).report();
    });
    expect(report!.runs).toHaveLength(2500);
    expect(report!.totals.outcomes.skipped).toBeGreaterThan(2400);
    expect(report!.stopped?.reason).toBe('budget_exceeded');
    expect(counts.skip).toBeLessThanOrEqual(3);
  }, 60_000);
});
