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

// Prices of 1/1024 and 4/1024 dollars a token: every cost, hold and sum below is exact in binary,
// so "never past the cap" is asserted exactly, with no tolerance.
const PRICES: PriceTable = { '*': { inputPerMTok: 1e6 / 1024, outputPerMTok: 4e6 / 1024 } };
const IN = 100;
const MAX_OUT = 50;
const costOf = (outputTokens: number): number => (IN + 4 * outputTokens) / 1024;

describe('a strict total dollar cap across worker processes', () => {
  it('three workers, the cap running out part-way: spend never passes it (runs, history files and Redis agree), unbounded calls fail closed, no hold left', async () => {
    const prefix = uniquePrefix('strictmp');
    const historyDir = fs.mkdtempSync(path.join(os.tmpdir(), 'asm-strictmp-'));
    const workers: ChildProcess[] = [];
    const redis = new Redis(url);
    try {
      const env = { REDIS_URL: url, QUEUE: 'runs', PREFIX: prefix, CONCURRENCY: '3', HISTORY_DIR: historyDir };
      workers.push(...(await Promise.all(['s1', 's2', 's3'].map((id) => spawnWorker({ ...env, WORKER_ID: id })))));
      // 60 tasks of two calls, each call holding $0.29 (100 input, 50 max output tokens) and
      // costing $0.13–$0.29; every tenth task's loop bounds no request.
      const tasks: DistributedTask[] = Array.from({ length: 60 }, (_, i) => {
        const payload: TestPayload = {
          steps: 2,
          delayMs: 15,
          tokens: {
            inputTokens: IN,
            maxOutputTokens: MAX_OUT,
            outputTokens: [10 + ((i * 7) % 41), 10 + ((i * 13) % 41)],
            ...(i % 10 === 9 ? { bounded: false } : {}),
          },
        };
        return { id: `task-${i}`, input: `task ${i}`, payload };
      });
      const cap = 6; // about a third of what the tasks would spend
      const batch = await submitBatch(tasks, {
        connection: url,
        name: 'runs',
        prefix,
        pricing: PRICES,
        total: { maxCostUsd: cap, strict: true },
      });
      const report = await batch.report();
      expect(report.runs.map((r) => r.id)).toEqual(tasks.map((t) => t.id));

      // Spend: within the cap exactly, by the runs' reports, by Redis, and by the history files.
      const byRuns = report.runs.reduce((sum, r) => sum + r.usage.costUsd, 0);
      expect(byRuns).toBeLessThanOrEqual(cap);
      expect(report.budget.costUsd).toBeLessThanOrEqual(cap);
      expect(report.totals.costUsd).toBe(report.budget.costUsd);
      expect(byRuns).toBe(report.budget.costUsd);
      // Part-way: more than a cap's worth was asked, and less than one call's hold is left unspent per slot in the cluster.
      expect(report.budget.costUsd).toBeGreaterThan(cap - 9 * costOf(MAX_OUT));
      expect(report.totals.outcomes.budget_exceeded).toBeGreaterThan(0);
      for (const run of report.runs.filter((r) => r.outcome === 'budget_exceeded'))
        expect(run.error?.message).toMatch(/does not fit under the strict cap|shared budget/);

      // Every bounded run that was let through charged exactly what its calls cost.
      const files = report.runs.filter((r) => r.historyFile !== undefined);
      let byFiles = 0;
      for (const run of files) {
        const loaded = await loadHistory(run.historyFile!);
        expect(validateHistory(loaded.entries)).toMatchObject({ ok: true });
        const usages = loaded.records
          .map((r) => (r.data as { usage?: { costUsd?: number } } | undefined)?.usage?.costUsd)
          .filter((c): c is number => typeof c === 'number');
        byFiles += usages.length === 0 ? 0 : Math.max(...usages);
      }
      expect(byFiles).toBe(byRuns);

      // The loops that bound no request: refused before any call, whichever worker ran them, saying what to give.
      const unbounded = report.runs.filter((_, i) => i % 10 === 9);
      for (const run of unbounded) {
        expect(run.usage.costUsd).toBe(0);
        expect(run.usage.llmCalls).toBe(0);
        if (run.outcome !== 'skipped') {
          expect(run.outcome).toBe('error');
          expect(run.error?.message).toMatch(
            /total\.maxCostUsd is a strict cap .*this loop has no llmCallBound: give `llmCallBound` on the loop .*`strict: false`/,
          );
        }
      }
      expect(unbounded.some((r) => r.outcome === 'error')).toBe(true);

      // No hold is left in Redis, in the budget or any run's usage.
      const keys = batchKeys(prefix, 'runs', report.batchId);
      expect(await redis.hget(keys.budget, 'hc')).toBeNull();
      expect(Object.keys(await redis.hgetall(keys.runUsage)).filter((f) => f.endsWith(':hc'))).toEqual([]);
      expect(new Set(report.runs.filter((r) => r.outcome !== 'skipped').map((r) => r.worker)).size).toBeGreaterThan(1);
    } finally {
      redis.disconnect();
      await stopAll(workers);
      await deletePrefix(url, prefix);
      fs.rmSync(historyDir, { recursive: true, force: true });
    }
  }, 60_000);
});
