import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { tool, ToolLoopAgent } from 'ai';
import { z } from 'zod';
import { loadHistory, validateHistory } from 'agent-state-machine/history';
import { type Pricing } from 'agent-state-machine';
import { mirrorAISDK } from '../../../lib/integrations/ai-sdk';
import { startBatchWorker, submitBatch, type BatchWorkerHandle } from '../../../lib/integrations/bullmq/index';
import { deletePrefix, releaseRedis, testRedisUrl, uniquePrefix } from '../../helpers/redis';
import { call, scriptedModel, text } from '../ai-sdk/scriptedModel';

/** $1/64 a step (1,000 output tokens), exact in binary. */
const pricing: Pricing = (usage) => (usage.outputTokens ?? 0) / 64_000;
const STEP = 1 / 64;

let url: string;
beforeAll(async () => {
  url = await testRedisUrl();
});
afterAll(() => releaseRedis());

describe('startBatchWorker({ drive }): framework loops in a distributed batch', () => {
  it('a batch of ToolLoopAgents under a shared dollar cap in Redis stops at the cap; every history validates', async () => {
    const prefix = uniquePrefix('framework');
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'asm-bullmq-fw-'));
    const workers: BatchWorkerHandle[] = [];
    try {
      for (const id of ['wa', 'wb'])
        workers.push(
          startBatchWorker({
            connection: url,
            name: 'runs',
            prefix,
            workerId: id,
            concurrency: 2,
            historyDir: dir,
            journal: true,
            pricing,
            onError: false,
            drive: (task, mirror, { signal }) => {
              const model = scriptedModel([
                { content: [call(`c-${task.id}`, 'lookup', {})], usage: { output: 1000 } },
                { content: [text(`answer ${task.id}`)], usage: { output: 1000 } },
              ]);
              const lookup = tool({ inputSchema: z.object({}), execute: async () => 'found' });
              const m = mirrorAISDK({ mirror, model, tools: { lookup } });
              return new ToolLoopAgent({ ...m.settings }).generate({ prompt: task.input, abortSignal: signal });
            },
          }),
        );
      const tasks = Array.from({ length: 30 }, (_, i) => ({ id: `t${i}`, input: `task ${i}`, payload: {} }));
      const batch = await submitBatch(tasks, {
        connection: url,
        name: 'runs',
        prefix,
        total: { maxCostUsd: 0.25, strict: false },
      });
      const report = await batch.report();
      expect(report.runs).toHaveLength(30);
      // Four runs in flight, each passing the cap by at most one step.
      expect(report.budget.costUsd).toBeGreaterThanOrEqual(0.25);
      expect(report.budget.costUsd).toBeLessThanOrEqual(0.25 + 4 * STEP);
      expect(report.totals.outcomes.skipped + report.totals.outcomes.budget_exceeded).toBeGreaterThan(0);
      expect(report.totals.outcomes.end_of_turn).toBeGreaterThan(0);
      const started = report.runs.filter((r) => r.historyFile !== undefined);
      expect(started.length).toBeGreaterThan(0);
      for (const run of started) {
        const history = await loadHistory(run.historyFile!);
        expect(validateHistory(history.entries).issues).toEqual([]);
        // Every model call the run made is in its journal. A run that started once the cap was
        // spent was refused at its first call and made none: its journal is empty, and says so.
        expect(history.journal.filter((line) => line.type === 'llm')).toHaveLength(run.usage.llmCalls);
      }
      expect(started.some((run) => run.usage.llmCalls > 0)).toBe(true);
    } finally {
      await Promise.all(workers.map((w) => w.close()));
      await deletePrefix(url, prefix);
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);

  it('names bad input: drive not a function, both agent and drive, or drive under its old name run', () => {
    const opts = { connection: url, name: 'q' };
    expect(() => startBatchWorker({ ...opts, drive: 'x' as never })).toThrow(/`drive`/);
    expect(() => startBatchWorker({ ...opts, drive: async () => undefined, agent: () => ({}) as never })).toThrow(
      /`agent`.*left out when `drive` is given/,
    );
    expect(() => startBatchWorker({ ...opts, run: async () => undefined } as never)).toThrow(
      'Expected `run` to be left out of startBatchWorker(): `run` is now `drive`',
    );
  });
});
