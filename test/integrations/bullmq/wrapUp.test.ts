// `perRun.wrapUp` on BullMQ: a worker's run that would pass its own cap ends wrapped_up with the
// model's answer, within that cap, in its report and its history file; beside a total dollar cap
// in Redis, which keeps the final call's hold too. `total.wrapUp` across worker processes:
// wrapUpMultiProcess.test.ts. Real Redis, a worker in this process.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Redis } from 'ioredis';
import { createScriptedAgent, type ScriptedReply } from 'agent-state-machine';
import { loadHistory, validateHistory } from 'agent-state-machine/history';
import {
  startBatchWorker,
  submitBatch,
  type DistributedTask,
  type PriceTable,
  type SubmitBatchOptions,
} from '../../../lib/integrations/bullmq/index';
import { batchKeys } from '../../../lib/integrations/bullmq/batchKeys';
import { deletePrefix, releaseRedis, testRedisUrl, uniquePrefix } from '../../helpers/redis';

let url: string;
beforeAll(async () => {
  url = await testRedisUrl();
});
afterAll(() => releaseRedis());

// Dollars of 1/1024 and 4/1024 a token: every cost and hold is exact in binary.
const PRICES: PriceTable = { '*': { inputPerMTok: 1e6 / 1024, outputPerMTok: 4e6 / 1024 } };
const round: ScriptedReply = {
  toolCalls: [{ id: 'c1', name: 'look', input: {} }],
  model: 'm',
  usage: { inputTokens: 100, outputTokens: 50 },
};

/** A run that would call tools for ever: only its cap ends it. */
const endless = (task: DistributedTask) =>
  createScriptedAgent({
    replies: Array.from({ length: 60 }, () => round),
    finalReply: { text: `answer of ${task.id}`, model: 'm', usage: { inputTokens: 100, outputTokens: 20 } },
    bound: { inputTokens: 100, maxOutputTokens: 50, model: 'm' },
    tools: { look: { output: 'seen' } },
  });

/** Three endless runs on a worker in this process, under the batch's `limits`; resolves to the report. */
async function endlessBatch(
  limits: Pick<SubmitBatchOptions, 'perRun' | 'total'>,
  worker: { concurrency: number; historyDir?: string },
) {
  const prefix = uniquePrefix('bullwrap');
  const running = startBatchWorker({
    connection: url,
    name: 'runs',
    prefix,
    agent: (task) => endless(task),
    ...(worker.historyDir === undefined ? {} : { historyDir: worker.historyDir, journal: true }),
    concurrency: worker.concurrency,
    onError: false,
  });
  try {
    const tasks = ['a', 'b', 'c'].map((id) => ({ id, input: `work on ${id}` }));
    const batch = await submitBatch(tasks, { connection: url, name: 'runs', prefix, pricing: PRICES, ...limits });
    return await batch.report();
  } finally {
    await running.close();
    await deletePrefix(url, prefix);
  }
}

describe('submitBatch({ perRun: { maxCostUsd, wrapUp } }) on a worker', () => {
  it('each run ends wrapped_up with its answer within its own cap, in the report and its history file', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'asm-bullwrap-'));
    try {
      const cap = 3;
      const report = await endlessBatch(
        // The cluster's limits in Redis, but no dollar cap there.
        { perRun: { maxCostUsd: cap, strict: true, wrapUp: true }, total: { maxLlmCalls: 500 } },
        { concurrency: 2, historyDir: dir },
      );
      expect(report.runs.map((r) => r.outcome)).toEqual(['wrapped_up', 'wrapped_up', 'wrapped_up']);
      for (const run of report.runs) {
        expect(run.usage.costUsd).toBeLessThanOrEqual(cap);
        expect(run.usage.llmCalls).toBeGreaterThan(2);
        const history = await loadHistory(run.historyFile!);
        expect(validateHistory(history.entries)).toMatchObject({ ok: true });
        expect(history.records.some((r) => r.to === 'WrappingUp')).toBe(true);
        expect(history.records.at(-1)!.data).toMatchObject({ outcome: 'wrapped_up', answer: `answer of ${run.id}` });
      }
      expect(report.totals.outcomes.wrapped_up).toBe(3);
      expect(report.budget.costUsd).toBe(report.totals.costUsd);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);

  it('perRun.visible: each call of a worker run carries the note of what its own budget has left', async () => {
    const prefix = uniquePrefix('bullvisible');
    const agents: Array<ReturnType<typeof createScriptedAgent>> = [];
    const worker = startBatchWorker({
      connection: url,
      name: 'runs',
      prefix,
      agent: () => {
        const agent = createScriptedAgent({
          replies: [round, { text: 'done', model: 'm', usage: { inputTokens: 100, outputTokens: 10 } }],
          tools: { look: { output: 'seen' } },
        });
        agents.push(agent);
        return agent;
      },
      onError: false,
    });
    try {
      const batch = await submitBatch([{ id: 'a', input: 'go' }], {
        connection: url,
        name: 'runs',
        prefix,
        pricing: PRICES,
        perRun: { maxLlmCalls: 5, visible: true },
      });
      const report = await batch.report();
      expect(report.runs[0]!.outcome).toBe('end_of_turn');
      const notes = agents[0]!.calls.flatMap((c) =>
        'budgetNote' in c && c.budgetNote !== undefined ? [c.budgetNote] : [],
      );
      expect(notes).toEqual([
        expect.stringMatching(/^Budget left: .*5 of 5 LLM calls/),
        expect.stringMatching(/^Budget left: .*4 of 5 LLM calls/),
      ]);
    } finally {
      await worker.close();
      await deletePrefix(url, prefix);
    }
  }, 60_000);

  it('a batch kept in Redis with wrapUp.reserveUsd (the spelling before finalCallUsd) is held the same by a new worker', async () => {
    const prefix = uniquePrefix('bullwrapold');
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'asm-bullwrapold-'));
    const redis = new Redis(url);
    try {
      const tasks = [{ id: 'a', input: 'work on a' }];
      const finalCallUsd = 0.5;
      const batch = await submitBatch(tasks, {
        connection: url,
        name: 'runs',
        prefix,
        batchId: 'old',
        pricing: PRICES,
        perRun: { maxCostUsd: 3, strict: true, wrapUp: { finalCallUsd } },
      });
      // What a producer before the rename left in Redis, before any worker read it.
      const key = batchKeys(prefix, 'runs', 'old').meta;
      const kept = (await redis.get(key))!;
      expect(kept).toContain('"finalCallUsd":0.5');
      await redis.set(key, kept.replace('"finalCallUsd"', '"reserveUsd"'));
      const worker = startBatchWorker({
        connection: url,
        name: 'runs',
        prefix,
        agent: (task) => endless(task),
        historyDir: dir,
        onError: false,
      });
      try {
        const [run] = (await batch.report()).runs;
        expect(run!.outcome).toBe('wrapped_up');
        const history = await loadHistory(run!.historyFile!);
        expect(history.records.find((r) => r.to === 'WrappingUp')!.data).toMatchObject({ finalCallUsd });
      } finally {
        await worker.close();
      }
    } finally {
      redis.disconnect();
      await deletePrefix(url, prefix);
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);

  it("perRun.wrapUp beside a total dollar cap: the cap in Redis keeps each run's final call's hold, so each run wraps up within both", async () => {
    const total = 3;
    const report = await endlessBatch(
      { perRun: { maxCostUsd: 3, strict: true, wrapUp: true }, total: { maxCostUsd: total, strict: true } },
      { concurrency: 3 },
    );
    expect(report.runs.map((r) => r.outcome)).toEqual(['wrapped_up', 'wrapped_up', 'wrapped_up']);
    // The total cap, lower than the three runs' own, is what ended them: each run spent some of
    // it and so none came near its own $3 (how they share it depends on the order their calls
    // reach Redis: one run took $1.54 of the $3 in a CI run).
    expect(report.budget.costUsd).toBeLessThanOrEqual(total);
    for (const run of report.runs) expect(run.usage.costUsd).toBeGreaterThan(0);
    const spent = report.runs.reduce((sum, run) => sum + run.usage.costUsd, 0);
    expect(spent).toBeLessThanOrEqual(total);
  }, 60_000);

  it("total.visible: each call carries the note of what is left of the batch's limits, read from Redis", async () => {
    const prefix = uniquePrefix('bulltotalvisible');
    const agents = new Map<string, ReturnType<typeof createScriptedAgent>>();
    const worker = startBatchWorker({
      connection: url,
      name: 'runs',
      prefix,
      agent: (task) => {
        const agent = createScriptedAgent({
          replies: [round, { text: 'done', model: 'm', usage: { inputTokens: 100, outputTokens: 10 } }],
          tools: { look: { output: 'seen' } },
        });
        agents.set(task.id, agent);
        return agent;
      },
      // One run after the other: the second sees what the first spent.
      concurrency: 1,
      onError: false,
    });
    try {
      const batch = await submitBatch(
        [
          { id: 'a', input: 'go' },
          { id: 'b', input: 'go' },
        ],
        { connection: url, name: 'runs', prefix, pricing: PRICES, total: { maxLlmCalls: 5, visible: true } },
      );
      const report = await batch.report();
      expect(report.runs.map((r) => r.outcome)).toEqual(['end_of_turn', 'end_of_turn']);
      const notes = (id: string): string[] =>
        agents.get(id)!.calls.flatMap((c) => ('budgetNote' in c && c.budgetNote !== undefined ? [c.budgetNote] : []));
      expect([...notes('a'), ...notes('b')]).toEqual([
        expect.stringMatching(/^Budget left: 5 of 5 LLM calls/),
        expect.stringMatching(/^Budget left: 4 of 5 LLM calls/),
        expect.stringMatching(/^Budget left: 3 of 5 LLM calls/),
        expect.stringMatching(/^Budget left: 2 of 5 LLM calls/),
      ]);
    } finally {
      await worker.close();
      await deletePrefix(url, prefix);
    }
  }, 60_000);

  it("refuses total.wrapUp beside whenSpent: 'pause' by name", async () => {
    const base = { connection: url, name: 'runs', prefix: uniquePrefix('bullwrapno') };
    await expect(
      submitBatch([{ id: 'a', input: 'x' }], { ...base, total: { maxCostUsd: 1, wrapUp: true, whenSpent: 'pause' } }),
    ).rejects.toThrow(/`total\.wrapUp` to be left out when `whenSpent` is 'pause'/);
  });
});
