// `total.wrapUp` on a framework run: a worker with `drive` drives mirrorAISDK over a mock model that
// would call tools for ever; the batch's dollar cap in Redis keeps each run's final call's hold
// beside its ordinary holds, so every run ends wrapped_up with the model's answer and the batch's
// spend never passes the cap. Without wrapUp, the same runs end budget_exceeded (the test
// bites). Real Redis, two workers in this process. `total.wrapUp` for agent runs: wrapUp.test.ts.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { LanguageModelV3CallOptions, LanguageModelV3GenerateResult } from '@ai-sdk/provider';
import { generateText, stepCountIs, tool } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { z } from 'zod';
import { Redis } from 'ioredis';
import { loadHistory, validateHistory } from 'agent-state-machine/history';
import { mirrorAISDK } from '../../../lib/integrations/ai-sdk';
import { batchKeys } from '../../../lib/integrations/bullmq/batchKeys';
import {
  startBatchWorker,
  submitBatch,
  type BatchWorkerHandle,
  type PriceTable,
  type SubmitBatchOptions,
} from '../../../lib/integrations/bullmq/index';
import { deletePrefix, releaseRedis, testRedisUrl, uniquePrefix } from '../../helpers/redis';
import { checkPrompt } from '../ai-sdk/scriptedModel';

let url: string;
beforeAll(async () => {
  url = await testRedisUrl();
});
afterAll(() => releaseRedis());

// Dollars of 1/1024 an input token and 4/1024 an output token: every charge is exact in binary.
const PRICES: PriceTable = { '*': { inputPerMTok: 1e6 / 1024, outputPerMTok: 4e6 / 1024 } };
const CAP = 32;
const RUNS = 4;

/**
 * A model that asks for a tool call whenever it may, and answers when it may not (the final
 * call). `first` hears of its first call: the mirror let it through, its holds taken.
 */
function endlessModel(id: string, first: () => void): MockLanguageModelV3 & { calls: LanguageModelV3CallOptions[] } {
  const calls: LanguageModelV3CallOptions[] = [];
  const answer = (options: LanguageModelV3CallOptions): LanguageModelV3GenerateResult => {
    calls.push(options);
    if (calls.length === 1) first();
    checkPrompt(options.prompt);
    const final = options.toolChoice?.type === 'none';
    const content = final
      ? [{ type: 'text' as const, text: `answer of ${id}` }]
      : [{ type: 'tool-call' as const, toolCallId: `${id}-${calls.length}`, toolName: 'look', input: '{}' }];
    return {
      content,
      finishReason: final ? { unified: 'stop', raw: 'stop' } : { unified: 'tool-calls', raw: 'tool_calls' },
      usage: {
        inputTokens: { total: 100, noCache: 100, cacheRead: undefined, cacheWrite: undefined },
        outputTokens: { total: final ? 20 : 40, text: final ? 20 : 40, reasoning: undefined },
      },
      warnings: [],
      response: { modelId: 'm' },
    };
  };
  const model = new MockLanguageModelV3({ modelId: 'm', doGenerate: async (options) => answer(options) });
  return Object.assign(model, { calls });
}

/**
 * The batch's runs on two workers of two slots each, under `total`; resolves to the report,
 * what Redis holds of the budget after, each run's model, and each run's history. Each run's
 * tool calls wait until every run's first model call was let through, so every run keeps its
 * final call's hold before the cap is near (a run that starts once the cap is full of others'
 * holds has no room for its final call, and ends budget_exceeded, as an agent run does).
 */
async function frameworkBatch(total: SubmitBatchOptions['total']) {
  const prefix = uniquePrefix('bullwrapfw');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'asm-bullwrapfw-'));
  const models = new Map<string, ReturnType<typeof endlessModel>>();
  let firstCalls = 0;
  let allStarted!: () => void;
  const started = new Promise<void>((resolve) => (allStarted = resolve));
  const first = (): void => {
    if (++firstCalls === RUNS) allStarted();
  };
  const workers: BatchWorkerHandle[] = [];
  const redis = new Redis(url);
  try {
    for (const workerId of ['wa', 'wb'])
      workers.push(
        startBatchWorker({
          connection: url,
          name: 'runs',
          prefix,
          workerId,
          concurrency: 2,
          historyDir: dir,
          onError: false,
          drive: (task, mirror, { signal }) => {
            const model = endlessModel(task.id, first);
            models.set(task.id, model);
            const look = tool({ inputSchema: z.object({}), execute: () => started.then(() => 'seen') });
            const m = mirrorAISDK({ mirror, model, tools: { look } });
            return generateText({
              ...m.settings,
              prompt: task.input,
              maxOutputTokens: 200,
              stopWhen: stepCountIs(200),
              abortSignal: signal,
            });
          },
        }),
      );
    const tasks = Array.from({ length: RUNS }, (_, i) => ({ id: `t${i}`, input: `work on task ${i}` }));
    const batch = await submitBatch(tasks, { connection: url, name: 'runs', prefix, pricing: PRICES, total });
    const report = await batch.report();
    const keys = batchKeys(prefix, 'runs', report.batchId);
    const budget = await redis.hgetall(keys.budget);
    const runUsage = await redis.hgetall(keys.runUsage);
    const histories = new Map<string, Awaited<ReturnType<typeof loadHistory>>>();
    for (const run of report.runs) histories.set(run.id, await loadHistory(run.historyFile!));
    return { report, budget, runUsage, models, histories };
  } finally {
    redis.disconnect();
    await Promise.all(workers.map((w) => w.close()));
    await deletePrefix(url, prefix);
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

describe('submitBatch({ total: { maxCostUsd, wrapUp } }) on workers with `drive` (mirrorAISDK)', () => {
  it("every run ends wrapped_up with the model's answer, the final call made with no tools, and the batch's spend within the cap", async () => {
    const { report, budget, runUsage, models, histories } = await frameworkBatch({ maxCostUsd: CAP, wrapUp: true });
    expect(report.runs.map((r) => r.outcome)).toEqual(Array.from({ length: RUNS }, () => 'wrapped_up'));
    expect(new Set(report.runs.map((r) => r.worker))).toEqual(new Set(['wa', 'wb']));
    for (const run of report.runs) {
      const history = histories.get(run.id)!;
      expect(validateHistory(history.entries).issues).toEqual([]);
      expect(history.records.slice(-2).map((r) => r.to)).toEqual(['WrappingUp', 'EndOfTurn']);
      expect(history.records.at(-1)!.data).toMatchObject({ outcome: 'wrapped_up', answer: `answer of ${run.id}` });
      // Only the last request is the final call: no tool to call.
      const calls = models.get(run.id)!.calls;
      expect(calls.length).toBeGreaterThan(2);
      expect(calls.slice(0, -1).every((c) => c.toolChoice?.type !== 'none')).toBe(true);
      expect(calls.at(-1)!.toolChoice).toEqual({ type: 'none' });
      expect(run.usage.llmCalls).toBe(calls.length);
    }
    // Spend never passes the cap; every hold went back as the runs ended, final holds too.
    expect(report.budget.costUsd).toBeLessThanOrEqual(CAP);
    expect(Number(budget['c'])).toBeLessThanOrEqual(CAP);
    expect(Number(budget['hc'] ?? 0)).toBe(0);
    expect(Object.keys(runUsage).filter((k) => k.endsWith(':hw'))).toEqual([]);
    expect(report.totals.outcomes.wrapped_up).toBe(RUNS);
  }, 60_000);

  it('without wrapUp, the same runs end budget_exceeded at the cap (what wrapUp turns into answers)', async () => {
    const { report } = await frameworkBatch({ maxCostUsd: CAP });
    expect(report.runs.map((r) => r.outcome)).toEqual(Array.from({ length: RUNS }, () => 'budget_exceeded'));
    expect(report.budget.costUsd).toBeLessThanOrEqual(CAP);
  }, 60_000);

  it("total.visible: each call of a framework run carries the note of what is left of the batch's cap, read from Redis", async () => {
    const { report, models } = await frameworkBatch({ maxCostUsd: CAP, wrapUp: true, visible: true });
    expect(report.totals.outcomes.wrapped_up).toBe(RUNS);
    for (const model of models.values()) {
      const notes = model.calls.map((c) => {
        const last = c.prompt.at(-1)!;
        return last.role === 'user' ? last.content.map((p) => ('text' in p ? p.text : '')).join('') : '';
      });
      expect(notes.every((n) => /^Budget left: \$\d+\.\d{4} of \$32\.0000 cost\.$/.test(n))).toBe(true);
    }
  }, 60_000);
});
