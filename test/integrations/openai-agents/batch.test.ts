// Fifty Agents SDK runs as one batch under one shared dollar cap: the cap stops them, every
// history file validates, and the batch report draws them.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Agent, setTracingDisabled, tool } from '@openai/agents';
import { z } from 'zod';
import { buildHtmlReport, loadHistory, runBatch, validateHistory } from 'agent-state-machine';
import { AgentsMirror } from '../../../lib/integrations/openai-agents';
import { cannedModel, type CannedModel } from './cannedModel';
import { expectStrictBatchWithinCap } from '../../helpers/frameworkRuns';

setTracingDisabled(true);

const echo = tool({
  name: 'echo',
  description: 'Echoes its text',
  parameters: z.object({ text: z.string() }),
  execute: async ({ text }) => `echo: ${text}`,
});

// $1 per million input tokens, $4 per million output: each call below costs $0.0014.
const pricing = (u: { inputTokens?: number; outputTokens?: number }): number =>
  ((u.inputTokens ?? 0) * 1 + (u.outputTokens ?? 0) * 4) / 1e6;
const CALL = 0.0014;
const CAP = 0.05;
const CONCURRENCY = 4;

let dir: string;
beforeEach(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), 'asm-agents-batch-'))));
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('a batch of Agents SDK runs', () => {
  it('runs 50 agents under one shared dollar cap that stops them; every file validates and the report draws', async () => {
    const models: CannedModel[] = [];
    const tasks = Array.from({ length: 50 }, (_, i) => {
      const model = cannedModel([
        { calls: [{ id: `c${i}`, name: 'echo', args: { text: `t${i}` } }], inputTokens: 1000, outputTokens: 100 },
        { text: `done ${i}`, inputTokens: 1000, outputTokens: 100 },
      ]);
      models.push(model);
      const agent = new Agent({ name: `agent-${i}`, model, tools: [echo] });
      return { id: `task-${String(i).padStart(2, '0')}`, input: `task ${i}`, agent };
    });
    const report = await runBatch(
      tasks.map(({ id, input, agent }) => ({
        id,
        input,
        run: (mirror) => new AgentsMirror({ mirror }).run(agent, input),
      })),
      { concurrency: CONCURRENCY, total: { maxCostUsd: CAP }, pricing, historyDir: dir, journal: true, logger: false },
    );

    // Stopped by the cap: not every run finished, and no call started once the cap was spent.
    expect(report.totals.outcomes.end_of_turn).toBeGreaterThan(0);
    expect(report.totals.outcomes.end_of_turn).toBeLessThan(50);
    expect(report.totals.costUsd).toBeGreaterThanOrEqual(CAP);
    // Each call that started found the cap unspent: at most one call per running task passes it.
    expect(report.totals.costUsd).toBeLessThan(CAP + CONCURRENCY * CALL);
    const made = models.reduce((n, m) => n + m.requests.length, 0);
    expect(report.totals.llmCalls).toBe(made);
    expect(report.totals.costUsd).toBeCloseTo(made * CALL, 10);

    const files = fs.readdirSync(dir).filter((f) => f.endsWith('.jsonl'));
    // One file per run that started: the ones the cap never let start have none.
    expect(files.length).toBe(report.runs.filter((r) => r.historyFile !== undefined).length);
    expect(files.length).toBeGreaterThan(0);
    for (const file of files) {
      const loaded = await loadHistory(path.join(dir, file));
      expect({ file, issues: validateHistory(loaded.entries).issues, rejected: loaded.rejected }).toEqual({
        file,
        issues: [],
        rejected: [],
      });
    }
    const stopped = report.runs.filter((r) => r.outcome === 'budget_exceeded');
    expect(stopped.length).toBeGreaterThan(0);

    const page = await buildHtmlReport(dir);
    // The page lists every task of the batch, the ones the spent cap never started included.
    expect(page).toMatchObject({ kind: 'batch', runs: 50, warnings: [] });
    expect(page.html).toContain('budget_exceeded');
  }, 60_000);

  it('under a strict shared cap, no call whose worst case would pass the cap is made: spend ends within the cap', async () => {
    const models: CannedModel[] = [];
    const tasks = Array.from({ length: 50 }, (_, i) => {
      // Reported input stays below the request's bound (its serialized size), as a provider's count does.
      const model = cannedModel([
        { calls: [{ id: `c${i}`, name: 'echo', args: { text: `t${i}` } }], inputTokens: 200, outputTokens: 100 },
        { text: `done ${i}`, inputTokens: 200, outputTokens: 100 },
      ]);
      models.push(model);
      const agent = new Agent({ name: `agent-${i}`, model, tools: [echo], modelSettings: { maxTokens: 100 } });
      return { id: `task-${String(i).padStart(2, '0')}`, input: `task ${i}`, agent };
    });
    const report = await runBatch(
      tasks.map(({ id, input, agent }) => ({
        id,
        input,
        run: (mirror) => new AgentsMirror({ mirror }).run(agent, input),
      })),
      {
        concurrency: CONCURRENCY,
        total: { maxCostUsd: CAP, strict: true },
        pricing,
        historyDir: dir,
        journal: true,
        logger: false,
      },
    );
    await expectStrictBatchWithinCap(report, dir, {
      cap: CAP,
      callsMade: models.reduce((n, m) => n + m.requests.length, 0),
      costPerCall: 0.0006,
    });
  }, 60_000);
});
