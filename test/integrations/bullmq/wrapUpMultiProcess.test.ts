// `total.wrapUp` on BullMQ across worker processes: the batch's dollar cap in Redis keeps each
// run's final call's hold beside its ordinary holds, so every endless run ends wrapped_up with
// its answer and the batch's spend never passes the cap. Without wrapUp, the same runs end
// budget_exceeded (the test bites). Real Redis, three real worker processes.
import type { ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { loadHistory, validateHistory } from 'agent-state-machine/history';
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

// Prices of 1/1024 and 4/1024 dollars a token: every cost, hold and sum is exact in binary, so
// "never past the cap" is asserted exactly.
const PRICES: PriceTable = { '*': { inputPerMTok: 1e6 / 1024, outputPerMTok: 4e6 / 1024 } };
/** Each call: 100 input tokens, at most 50 output ($0.29 held), 40 reported ($0.25 charged). */
const tokens = { inputTokens: 100, maxOutputTokens: 50, outputTokens: Array.from({ length: 60 }, () => 40) };
// Six runs on six slots (three workers of two): each starts before the cap is near, so each
// keeps its final call's hold from its first call on. Each ordinary call holds $0.29 beside a
// final call's $0.45: the cap lets every run make a few calls, and then each must wrap up.
const CAP = 8;
const tasks: DistributedTask[] = Array.from({ length: 6 }, (_, i) => {
  const payload: TestPayload = { steps: 60, delayMs: 40, tokens, answer: `answer of task-${i}` };
  return { id: `task-${i}`, input: `work on task ${i}`, payload };
});

/** Runs the batch on three worker processes; resolves to its report, what Redis holds of it after, and each run's last record. */
async function runBatch(total: Parameters<typeof submitBatch>[1]['total']) {
  const prefix = uniquePrefix('wrapmp');
  const historyDir = fs.mkdtempSync(path.join(os.tmpdir(), 'asm-wrapmp-'));
  const workers: ChildProcess[] = [];
  const redis = new Redis(url);
  try {
    const env = { REDIS_URL: url, QUEUE: 'runs', PREFIX: prefix, CONCURRENCY: '2', HISTORY_DIR: historyDir };
    workers.push(...(await Promise.all(['w1', 'w2', 'w3'].map((id) => spawnWorker({ ...env, WORKER_ID: id })))));
    const batch = await submitBatch(tasks, { connection: url, name: 'runs', prefix, pricing: PRICES, total });
    const report = await batch.report();
    const keys = batchKeys(prefix, 'runs', report.batchId);
    const budget = await redis.hgetall(keys.budget);
    const runUsage = await redis.hgetall(keys.runUsage);
    const ends = [];
    for (const run of report.runs) {
      const history = await loadHistory(run.historyFile!);
      expect(validateHistory(history.entries)).toMatchObject({ ok: true });
      ends.push({ wrapped: history.records.some((r) => r.to === 'WrappingUp'), data: history.records.at(-1)!.data });
    }
    return { report, budget, runUsage, ends };
  } finally {
    redis.disconnect();
    await stopAll(workers);
    await deletePrefix(url, prefix);
    fs.rmSync(historyDir, { recursive: true, force: true });
  }
}

describe('submitBatch({ total: { maxCostUsd, strict, wrapUp } }) on worker processes', () => {
  it('every endless run ends wrapped_up with its answer; spend ≤ cap in Redis and in the report; no hold left', async () => {
    const { report, budget, runUsage, ends } = await runBatch({ maxCostUsd: CAP, strict: true, wrapUp: true });
    expect(report.runs.map((r) => r.outcome)).toEqual(tasks.map(() => 'wrapped_up'));
    for (const run of report.runs) expect(run.usage.llmCalls).toBeGreaterThan(1);
    // The answers: each run's final call, from its own loop, through WrappingUp.
    expect(ends).toEqual(
      tasks.map((t) => ({
        wrapped: true,
        data: expect.objectContaining({ outcome: 'wrapped_up', answer: `answer of ${t.id}` }) as unknown,
      })),
    );
    expect(report.totals.outcomes.wrapped_up).toBe(6);
    const spentInRedis = Number(budget.c);
    expect(spentInRedis).toBeLessThanOrEqual(CAP);
    expect(report.budget.costUsd).toBe(spentInRedis);
    expect(report.runs.reduce((sum, r) => sum + r.usage.costUsd, 0)).toBe(spentInRedis);
    // Close to the cap: less than each run's last ordinary call and final hold is left unspent.
    expect(spentInRedis).toBeGreaterThan(CAP - 6 * ((100 + 200) / 1024 + (264 + 200) / 1024));
    // Every hold let go: ordinary and final alike.
    expect(budget.hc).toBeUndefined();
    expect(Object.keys(runUsage).filter((f) => f.endsWith(':hc') || f.endsWith(':hw'))).toEqual([]);
    expect(new Set(report.runs.map((r) => r.worker)).size).toBeGreaterThan(1);
    process.stdout.write(
      `wrapUp: spent $${spentInRedis} of $${CAP}, ${report.totals.llmCalls} LLM calls, workers ${[...new Set(report.runs.map((r) => r.worker))].join(',')}\n`,
    );
  }, 60_000);

  it('without wrapUp the same runs end budget_exceeded, within the cap', async () => {
    const { report, budget, ends } = await runBatch({ maxCostUsd: CAP, strict: true });
    expect(report.runs.map((r) => r.outcome)).toEqual(tasks.map(() => 'budget_exceeded'));
    expect(ends.some((e) => e.wrapped)).toBe(false);
    expect(Number(budget.c)).toBeLessThanOrEqual(CAP);
  }, 60_000);
});
