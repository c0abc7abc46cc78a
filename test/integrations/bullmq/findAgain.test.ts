import type { ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import {
  attachBatch,
  startBatchWorker,
  submitBatch,
  type BatchWorkerHandle,
  type DistributedTask,
} from '../../../lib/integrations/bullmq/index';
import { deletePrefix, releaseRedis, testRedisUrl, uniquePrefix } from '../../helpers/redis';
import { agentFromPayload } from './fixtures/agentFromPayload';
import { spawnProducer } from './fixtures/spawnProducer';

let url: string;
beforeAll(async () => {
  url = await testRedisUrl();
});
afterAll(() => releaseRedis());

async function killed(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const gone = new Promise((r) => child.once('exit', r));
  child.kill('SIGKILL');
  await gone;
}

describe('batches you can find again', () => {
  it('a producer SIGKILLed and started again with the same batchId resumes the batch: one cap, no run twice; another process attaches to it', async () => {
    const prefix = uniquePrefix('resume');
    const workers: BatchWorkerHandle[] = [];
    const children: ChildProcess[] = [];
    try {
      workers.push(
        startBatchWorker({
          connection: url,
          name: 'q',
          prefix,
          concurrency: 4,
          agent: (task) => agentFromPayload(task.payload),
          onError: false,
        }),
      );
      const cost = 0.01;
      const cap = 0.6;
      const env = {
        REDIS_URL: url,
        QUEUE: 'q',
        PREFIX: prefix,
        BATCH_ID: 'nightly-1',
        N: '80',
        COST: String(cost),
        CAP: String(cap),
      };
      const first = spawnProducer(env);
      children.push(first.child);
      await first.next(/^progress (1\d|[2-9]\d)$/);
      await killed(first.child);

      // Any process can attach: progress, then the report once the batch is over.
      const attached = await attachBatch({ connection: url, name: 'q', prefix, batchId: 'nightly-1' });

      const second = spawnProducer(env);
      children.push(second.child);
      const summary = JSON.parse((await second.next(/^report (.*)$/))[1]!) as {
        batchId: string;
        runs: Array<{ id: string; outcome: string; attempt?: number }>;
        totals: { costUsd: number; llmCalls: number };
        budget: { costUsd: number; llmCalls: number };
      };
      expect(summary.batchId).toBe('nightly-1');
      expect(summary.runs.map((r) => r.id)).toEqual(Array.from({ length: 80 }, (_, i) => `task-${i}`));
      // No run was started twice, and the budget is the one batch's: one cap, passed by at most
      // one response per run in flight (4).
      expect(summary.runs.every((r) => r.attempt === undefined || r.attempt === 1)).toBe(true);
      expect(summary.budget.llmCalls).toBe(summary.totals.llmCalls);
      expect(summary.budget.costUsd).toBeGreaterThanOrEqual(cap);
      expect(summary.budget.costUsd).toBeLessThanOrEqual(cap + 4 * cost + 1e-9);

      const report = await attached.report();
      expect(report.runs.map((r) => [r.id, r.outcome])).toEqual(summary.runs.map((r) => [r.id, r.outcome]));
      expect(attached.progress().done).toBe(80);
    } finally {
      await Promise.all(children.map(killed));
      await Promise.all(workers.map((w) => w.close()));
      await deletePrefix(url, prefix);
    }
  }, 60_000);

  it('a batch is aborted from another handle; the same id with other tasks is refused; an unknown id is named; the report goes to the file named', async () => {
    const prefix = uniquePrefix('attach');
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'asm-attach-'));
    const worker = startBatchWorker({
      connection: url,
      name: 'q',
      prefix,
      concurrency: 2,
      agent: (task) => agentFromPayload(task.payload),
      onError: false,
    });
    try {
      const tasks: DistributedTask[] = Array.from({ length: 40 }, (_, i) => ({
        id: `t${i}`,
        input: 'x',
        payload: { steps: 2, delayMs: 20 },
      }));
      const reportFile = path.join(dir, 'report.json');
      const batch = await submitBatch(tasks, { connection: url, name: 'q', prefix, batchId: 'b-1', reportFile });
      await expect(submitBatch(tasks.slice(1), { connection: url, name: 'q', prefix, batchId: 'b-1' })).rejects.toThrow(
        /`batchId` .*the same tasks .* as batch b-1 was submitted with/,
      );
      await expect(attachBatch({ connection: url, name: 'q', prefix, batchId: 'nope' })).rejects.toThrow(
        /^no batch nope on queue q \(prefix .*\) in Redis at 127\.0\.0\.1:\d+/,
      );
      const other = await attachBatch({ connection: url, name: 'q', prefix, batchId: 'b-1' });
      await other.abort('enough');
      const report = await batch.report();
      expect(report.stopped).toEqual({ reason: 'aborted', message: 'batch aborted: enough' });
      expect(report.totals.outcomes.skipped).toBeGreaterThan(0);
      expect(report.runs).toHaveLength(40);
      const written = JSON.parse(fs.readFileSync(reportFile, 'utf8')) as { batchId: string; runs: unknown[] };
      expect(written.batchId).toBe('b-1');
      expect(written.runs).toHaveLength(40);
      expect((await other.report()).runs.map((r) => r.outcome)).toEqual(report.runs.map((r) => r.outcome));
    } finally {
      await worker.close();
      await deletePrefix(url, prefix);
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }, 30_000);
});

describe('one history folder, one distributed batch', () => {
  it('two batches of the same id on two queues cannot write into one history folder: the second one’s runs are refused, not made', async () => {
    const prefixes = [uniquePrefix('lockA'), uniquePrefix('lockB')];
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'asm-lockdist-'));
    const made: number[] = [0, 0];
    const workers = prefixes.map((prefix, w) =>
      startBatchWorker({
        connection: url,
        name: 'q',
        prefix,
        historyDir: dir,
        agent: (task) => {
          made[w]! += 1;
          return agentFromPayload(task.payload);
        },
        onError: false,
      }),
    );
    try {
      const tasks = (n: number): DistributedTask[] =>
        Array.from({ length: n }, (_, i) => ({ id: `t${i}`, input: 'x' }));
      const first = await (
        await submitBatch(tasks(3), { connection: url, name: 'q', prefix: prefixes[0]!, batchId: 'same' })
      ).report();
      expect(first.totals.outcomes.end_of_turn).toBe(3);
      const second = await (
        await submitBatch(tasks(3), { connection: url, name: 'q', prefix: prefixes[1]!, batchId: 'same' })
      ).report();
      expect(second.totals.outcomes.error).toBe(3);
      for (const run of second.runs) {
        expect(run.error?.name).toBe('FolderLockedError');
        expect(run.error?.message).toMatch(/^history folder .*same is in use by batch .*lockA.*\/same/);
      }
      expect(made).toEqual([3, 0]);
    } finally {
      await Promise.all(workers.map((w) => w.close()));
      await Promise.all(prefixes.map((p) => deletePrefix(url, p)));
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }, 30_000);
});
