import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import fc from 'fast-check';
import { Redis } from 'ioredis';
import { formatBatchReport, InvalidArgumentError, RunSkippedError, type AgentLoop } from 'agent-state-machine';
import { loadHistory, validateHistory } from 'agent-state-machine/history';
import {
  RedisBudget,
  attachBatch,
  startBatchWorker,
  submitBatch,
  type BatchWorkerHandle,
  type DistributedTask,
} from '../../../lib/integrations/bullmq/index';
import type { RunStore } from 'agent-state-machine/batch';
import { batchKeys } from '../../../lib/integrations/bullmq/batchKeys';
import { PostgresStore } from '../../../lib/integrations/postgres';
import { PG_URL } from '../../helpers/postgres';
import { deletePrefix, releaseRedis, testRedisUrl, uniquePrefix } from '../../helpers/redis';
import { agentFromPayload, type TestPayload } from './fixtures/agentFromPayload';

let url: string;
beforeAll(async () => {
  url = await testRedisUrl();
});
afterAll(() => releaseRedis());

/** Each test: its own BullMQ prefix, workers closed and keys deleted after. */
function setup(label: string) {
  const prefix = uniquePrefix(label);
  const workers: BatchWorkerHandle[] = [];
  const dirs: string[] = [];
  return {
    prefix,
    name: 'runs',
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
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'asm-bullmq-'));
      dirs.push(dir);
      return dir;
    },
    async cleanup() {
      await Promise.all(workers.map((w) => w.close()));
      await deletePrefix(url, prefix);
      for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

const tasks = (n: number, payload: TestPayload = {}): DistributedTask[] =>
  Array.from({ length: n }, (_, i) => ({ id: `t${i}`, input: `task ${i}`, payload }));

describe('submitBatch() with startBatchWorker()', () => {
  it('.report() lists every task once, in task order, naming the worker and its history file', async () => {
    const t = setup('basic');
    try {
      const dir = t.tmp();
      const a = t.worker({ workerId: 'wa', concurrency: 2, historyDir: dir, journal: true });
      const b = t.worker({ workerId: 'wb', concurrency: 2, historyDir: dir, journal: true });
      const events: string[] = [];
      const batch = await submitBatch(tasks(12), {
        connection: url,
        name: t.name,
        prefix: t.prefix,
        onProgress: (p) => events.push(p.event.type),
      });
      const report = await batch.report();
      expect(report.runs.map((r) => r.id)).toEqual(tasks(12).map((x) => x.id));
      expect(report.totals.outcomes.end_of_turn).toBe(12);
      expect(report.totals.llmCalls).toBe(24);
      expect(report.totals.toolCalls).toBe(12);
      expect(report.totals.costUsd).toBeCloseTo(0.24, 10);
      expect(report.budget.llmCalls).toBe(24);
      expect(report.budget.costUsd).toBeCloseTo(0.24, 10);
      expect(new Set(report.runs.map((r) => r.worker))).toEqual(
        new Set([a.id, b.id].filter((id) => report.workers[id] !== undefined)),
      );
      expect(report.concurrency).toBe(Object.values(report.workers).reduce((s, w) => s + w.concurrency, 0));
      expect(events.filter((e) => e === 'finished')).toHaveLength(12);
      expect(events.filter((e) => e === 'started')).toHaveLength(12);
      for (const run of report.runs) {
        expect(run.historyFile).toBe(path.join(dir, report.batchId, `${report.runs.indexOf(run)}-${run.id}.jsonl`));
        const loaded = await loadHistory(run.historyFile!);
        const check = validateHistory(loaded.entries);
        expect(check.ok).toBe(true);
        expect(check.records).toBe(run.transitions);
        // journal: true — each of the run's two LLM calls is in its file.
        expect(loaded.journal.filter((j) => j.type === 'llm')).toHaveLength(2);
        expect(loaded.meta?.metadata).toMatchObject({ worker: run.worker, batchId: report.batchId });
      }
      expect(batch.progress().done).toBe(12);
    } finally {
      await t.cleanup();
    }
  }, 30_000);

  it("counts the calls of unknown cost apart, over every worker's runs: never as $0", async () => {
    const t = setup('unpriced');
    try {
      t.worker({ workerId: 'wa' });
      t.worker({ workerId: 'wb' });
      // Tokens and no cost, and no pricing: each call's money is in no dollar figure.
      const payload: TestPayload = {
        steps: 2,
        tokens: { inputTokens: 100, maxOutputTokens: 50, outputTokens: [10, 10], bounded: false },
      };
      const batch = await submitBatch(tasks(3, payload), { connection: url, name: t.name, prefix: t.prefix });
      const report = await batch.report();
      expect(report.runs.map((r) => [r.outcome, r.usage.costUsd, r.usage.unpricedCalls])).toEqual([
        ['end_of_turn', 0, 2],
        ['end_of_turn', 0, 2],
        ['end_of_turn', 0, 2],
      ]);
      expect(report.totals).toMatchObject({ costUsd: 0, unpricedCalls: 6 });
      expect(formatBatchReport(report)).toContain('Money: $0.0000 billed, and 6 LLM calls of unknown cost');
    } finally {
      await t.cleanup();
    }
  });

  it('attachBatch().progress() on a finished batch reads its real counts at once, not a made-up start', async () => {
    const t = setup('attach-progress');
    try {
      t.worker({ concurrency: 4 });
      const batch = await submitBatch(tasks(12), { connection: url, name: t.name, prefix: t.prefix });
      const report = await batch.report();
      const attached = await attachBatch({ connection: url, name: t.name, prefix: t.prefix, batchId: report.batchId });
      const progress = attached.progress();
      expect(progress).toMatchObject({
        done: 12,
        total: 12,
        running: 0,
        outcomes: { end_of_turn: 12, skipped: 0 },
        usage: { llmCalls: 24 },
      });
      expect(progress.usage.costUsd).toBeCloseTo(0.24, 10);
      expect(progress.event).toMatchObject({ type: 'finished', run: { outcome: 'end_of_turn' } });
      expect((await attached.report()).totals.outcomes.end_of_turn).toBe(12);
    } finally {
      await t.cleanup();
    }
  }, 30_000);

  it('once every run is reported, every key of the batch expires after expireAfterMs; keepKeys keeps them', async () => {
    const t = setup('keys');
    const client = new Redis(url);
    try {
      t.worker();
      const batch = await submitBatch(tasks(3), {
        connection: url,
        name: t.name,
        prefix: t.prefix,
        expireAfterMs: 60_000,
      });
      const { batchId } = await batch.report();
      const left = await client.keys(`${t.prefix}:${t.name}:asm:${batchId}*`);
      expect(left.length).toBeGreaterThanOrEqual(6);
      for (const key of left) {
        const ttl = await client.pttl(key);
        expect(ttl).toBeGreaterThan(0);
        expect(ttl).toBeLessThanOrEqual(60_000);
      }
      const kept = await submitBatch(tasks(3), { connection: url, name: t.name, prefix: t.prefix, keepKeys: true });
      await kept.report();
      const keys = await client.keys(`${t.prefix}:${t.name}:asm:${kept.batchId}*`);
      expect(keys.length).toBeGreaterThanOrEqual(6);
      for (const key of keys) expect(await client.pttl(key)).toBe(-1);
    } finally {
      client.disconnect();
      await t.cleanup();
    }
  }, 30_000);

  it('total.maxCostUsd: spend stops within one LLM response per run in flight; the rest are skipped', async () => {
    const t = setup('cost');
    try {
      t.worker({ concurrency: 3 });
      t.worker({ concurrency: 3 });
      const cost = 0.01;
      const batch = await submitBatch(tasks(60, { steps: 3, costUsd: cost, delayMs: 2 }), {
        connection: url,
        name: t.name,
        prefix: t.prefix,
        total: { maxCostUsd: 0.5, strict: false },
      });
      const report = await batch.report();
      expect(report.runs).toHaveLength(60);
      expect(report.budget.costUsd).toBeGreaterThanOrEqual(0.5);
      expect(report.budget.costUsd).toBeLessThanOrEqual(0.5 + 6 * cost + 1e-9);
      expect(report.totals.costUsd).toBeCloseTo(report.budget.costUsd, 9);
      expect(report.totals.outcomes.skipped).toBeGreaterThan(0);
      expect(report.stopped?.reason).toBe('budget_exceeded');
      const skipped = report.runs.find((r) => r.outcome === 'skipped')!;
      expect(skipped.error).toBeInstanceOf(RunSkippedError);
      expect(skipped.error!.message).toMatch(/^shared budget exceeded: \$0\.\d+ of \$0\.50/);
    } finally {
      await t.cleanup();
    }
  }, 30_000);

  it('total.maxLlmCalls is never passed, however many workers ask at once', async () => {
    const t = setup('calls');
    try {
      for (let i = 0; i < 3; i++) t.worker({ concurrency: 4 });
      const batch = await submitBatch(tasks(40, { steps: 3 }), {
        connection: url,
        name: t.name,
        prefix: t.prefix,
        total: { maxLlmCalls: 25 },
      });
      const report = await batch.report();
      expect(report.budget.llmCalls).toBe(25);
      expect(report.totals.llmCalls).toBe(25);
      expect(report.totals.outcomes.budget_exceeded + report.totals.outcomes.skipped).toBeGreaterThan(0);
    } finally {
      await t.cleanup();
    }
  }, 30_000);

  it('perRun limits each run on its own', async () => {
    const t = setup('perrun');
    try {
      t.worker();
      const report = await (
        await submitBatch(tasks(4, { steps: 5 }), {
          connection: url,
          name: t.name,
          prefix: t.prefix,
          perRun: { maxLlmCalls: 2 },
        })
      ).report();
      expect(report.runs.map((r) => [r.outcome, r.usage.llmCalls])).toEqual(
        Array.from({ length: 4 }, () => ['budget_exceeded', 2]),
      );
    } finally {
      await t.cleanup();
    }
  }, 30_000);

  it('.abort() cancels the runs in flight on every worker, skips the queued ones, and the report comes back', async () => {
    const t = setup('abort');
    try {
      let started = 0;
      const slow = (task: DistributedTask, { signal }: { signal: AbortSignal }): AgentLoop => {
        started += 1;
        void signal;
        return agentFromPayload({ ...(task.payload as TestPayload), delayMs: 60_000 });
      };
      t.worker({ concurrency: 2, agent: slow });
      t.worker({ concurrency: 2, agent: slow });
      const controller = new AbortController();
      const batch = await submitBatch(tasks(20), {
        connection: url,
        name: t.name,
        prefix: t.prefix,
        signal: controller.signal,
      });
      while (batch.progress().running < 4) await new Promise((r) => setTimeout(r, 20));
      controller.abort('operator stop');
      const report = await batch.report();
      expect(started).toBe(4);
      expect(report.totals.outcomes).toMatchObject({ cancelled: 4, skipped: 16, end_of_turn: 0 });
      expect(report.stopped).toEqual({ reason: 'aborted', message: 'batch aborted: operator stop' });
      for (const run of report.runs.filter((r) => r.outcome === 'cancelled')) expect(run.error).toBeDefined();
      for (const run of report.runs.filter((r) => r.outcome === 'skipped'))
        expect((run.error as RunSkippedError).reason).toBe('aborted');
    } finally {
      await t.cleanup();
    }
  }, 30_000);

  it('an agent factory that throws ends its run as error; the batch goes on', async () => {
    const t = setup('factory');
    try {
      t.worker({
        agent: (task) => {
          if (task.id === 't1') throw new Error('no sandbox');
          return agentFromPayload(task.payload);
        },
      });
      const report = await (await submitBatch(tasks(3), { connection: url, name: t.name, prefix: t.prefix })).report();
      expect(report.runs.map((r) => r.outcome)).toEqual(['end_of_turn', 'error', 'end_of_turn']);
      expect(report.runs[1]!.error!.message).toMatch(/no sandbox/);
    } finally {
      await t.cleanup();
    }
  }, 30_000);

  it('submitBatch() names bad input', async () => {
    const opts = { connection: 'redis://127.0.0.1:1', name: 'q' };
    await expect(
      submitBatch(
        [
          { id: 'a', input: 'x' },
          { id: 'a', input: 'y' },
        ],
        opts,
      ),
    ).rejects.toThrow(/tasks\[1\]\.id/);
    await expect(submitBatch([{ id: 'a', input: 3 as unknown as string }], opts)).rejects.toThrow(InvalidArgumentError);
    await expect(
      submitBatch(
        [{ id: 'a', input: 'x', payload: { f: () => 1 } as unknown }].map((t) => ({ ...t, payload: () => 1 })),
        opts,
      ),
    ).rejects.toThrow(/tasks\[0\]\.payload/);
    await expect(submitBatch([], { ...opts, name: 'a:b' })).rejects.toThrow(/`name`/);
    await expect(submitBatch([], { ...opts, total: { maxCostUsd: -1 } })).rejects.toThrow(/total\.maxCostUsd/);
    // Pausing needs a strict cap: refused by name, never dropped (pause.test.ts has the rest).
    await expect(
      submitBatch([], { ...opts, total: { maxCostUsd: 1, strict: false, whenSpent: 'pause' } }),
    ).rejects.toThrow(/`total.whenSpent` to be left out \(or 'stop'\) unless `maxCostUsd` is a strict cap/);
    await expect(submitBatch([], { ...opts, retryLostRuns: 1.5 })).rejects.toThrow(/retryLostRuns/);
    await expect(submitBatch([], { ...opts, pricing: { m: { inputPerMTok: 1, outputPerMTok: NaN } } })).rejects.toThrow(
      /pricing\["m"\]\.outputPerMTok/,
    );
    await expect(submitBatch([], { ...opts, connection: 'localhost:6379' })).rejects.toThrow(/connection/);
    await expect(submitBatch([], { ...opts, store: {} as RunStore })).rejects.toThrow(
      'Expected `store` to be a RunStore (new PostgresStore(url))',
    );
  });

  it('startBatchWorker() names bad input', async () => {
    const opts = { connection: url, name: 'q', agent: () => agentFromPayload({}) };
    expect(() => startBatchWorker({ ...opts, concurrency: 0 })).toThrow(/concurrency/);
    expect(() => startBatchWorker({ ...opts, agent: 'x' as unknown as () => AgentLoop })).toThrow(/`agent`/);
    expect(() => startBatchWorker({ ...opts, lockDurationMs: -5 })).toThrow(/lockDurationMs/);
    expect(() => startBatchWorker({ ...opts, journal: true })).toThrow(
      'Expected `journal` to be left out (or false) unless `historyDir` or `store` is set',
    );
    // A run's records go to one place: both are refused by name, before any connection.
    const store = new PostgresStore(PG_URL);
    try {
      expect(() => startBatchWorker({ ...opts, store, historyDir: '/tmp/runs' })).toThrow(
        "Expected `historyDir` to be left out beside `store`: each run's records go to one place",
      );
      expect(() => startBatchWorker({ ...opts, store: 'postgres://x' as unknown as RunStore })).toThrow(
        'Expected `store` to be a RunStore (new PostgresStore(url))',
      );
    } finally {
      await store.close();
    }
  });
});

describe('RedisBudget', () => {
  it('.reserve() never lets call counts pass their cap, from many clients at once', async () => {
    const prefix = uniquePrefix('reserve');
    const clients = Array.from({ length: 4 }, () => new Redis(url));
    try {
      await fc.assert(
        fc.asyncProperty(fc.integer({ min: 0, max: 30 }), fc.integer({ min: 1, max: 60 }), async (cap, asks) => {
          const keys = batchKeys(prefix, 'q', `b${Math.random()}`);
          await clients[0]!.hset(keys.budget, { st: Date.now(), mlc: cap });
          const budgets = clients.map((c, i) => new RedisBudget(c, keys, { maxLlmCalls: cap }, i));
          const answers = await Promise.all(
            Array.from({ length: asks }, (_, i) => budgets[i % budgets.length]!.reserve('llm')),
          );
          const allowed = answers.filter((a) => a === undefined).length;
          expect(allowed).toBe(Math.min(cap, asks));
          expect(Number(await clients[0]!.hget(keys.budget, 'l'))).toBe(allowed);
          for (const a of answers.filter((x) => x !== undefined))
            expect(a).toMatchObject({ limit: 'maxLlmCalls', used: cap, max: cap });
        }),
        { numRuns: 25 },
      );
    } finally {
      clients.forEach((c) => c.disconnect());
      await deletePrefix(url, prefix);
    }
  });

  it('.charge() adds cost and tokens and says when a cap is reached, worded as in one process', async () => {
    const prefix = uniquePrefix('charge');
    const client = new Redis(url);
    try {
      const keys = batchKeys(prefix, 'q', 'b');
      await client.hset(keys.budget, { st: Date.now(), mc: 0.5 });
      const budget = new RedisBudget(client, keys, { maxCostUsd: 0.5 }, 0);
      expect(await budget.charge({ costUsd: 0.3, inputTokens: 10, outputTokens: 5 })).toBeUndefined();
      expect(await budget.reserve('llm')).toBeUndefined();
      const spent = await budget.charge({ costUsd: 0.3 });
      expect(spent).toMatchObject({
        limit: 'maxCostUsd',
        max: 0.5,
        message: 'shared budget exceeded: $0.6000 of $0.5000 after 1 LLM call',
      });
      expect(await budget.reserve('tool')).toMatchObject({ limit: 'maxCostUsd' });
      await expect(budget.charge({ costUsd: -1 })).rejects.toThrow(/delta\.costUsd/);
      // Wall time alone changes nothing in Redis and costs no round trip.
      expect(await budget.charge({ wallMs: 5 })).toBeUndefined();
      expect(await client.hgetall(keys.runUsage)).toEqual({ '0:c': '0.6', '0:i': '10', '0:o': '5', '0:l': '1' });
    } finally {
      client.disconnect();
      await deletePrefix(url, prefix);
    }
  });
});
