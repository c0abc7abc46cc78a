import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { tool, ToolLoopAgent } from 'ai';
import { z } from 'zod';
import { buildHtmlReport } from 'agent-state-machine/report';
import { loadHistory, validateHistory } from 'agent-state-machine/history';
import { runBatch, type FrameworkTask, type Pricing } from 'agent-state-machine';
import { mirrorAISDK } from '../../../lib/integrations/ai-sdk';
import { call, scriptedModel, text } from './scriptedModel';

/** $1/64 a step (1,000 output tokens): sums of it are exact in binary, so the cap is met exactly. */
const pricing: Pricing = (usage) => (usage.outputTokens ?? 0) / 64_000;
const STEP = 1 / 64;

let dir: string;
beforeEach(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-sm-mirror-batch-'))));
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

/** 50 ToolLoopAgent tasks, two steps each (a tool call, then text); counts the model calls made. */
function tasks(calls: { made: number }, maxOutputTokens?: number): FrameworkTask[] {
  return Array.from({ length: 50 }, (_, i) => ({
    id: `agent-${i}`,
    input: `task ${i}`,
    drive: async (mirror) => {
      const model = scriptedModel([
        { content: [call(`c${i}`, 'lookup', { n: i })], usage: { output: 1000 } },
        { content: [text(`answer ${i}`)], usage: { output: 1000 } },
      ]);
      const counted = Object.assign(Object.create(model) as typeof model, {
        doGenerate: (o: Parameters<typeof model.doGenerate>[0]) => ((calls.made += 1), model.doGenerate(o)),
      });
      const lookup = tool({ inputSchema: z.object({ n: z.number() }), execute: async ({ n }) => `found ${n}` });
      const m = mirrorAISDK({ mirror, model: counted, tools: { lookup } });
      const agent = new ToolLoopAgent({ ...m.settings, ...(maxOutputTokens === undefined ? {} : { maxOutputTokens }) });
      return agent.generate({ prompt: `task ${i}`, abortSignal: m.signal });
    },
  }));
}

async function checkFolder(historyDir: string, runs: number): Promise<void> {
  const files = fs.readdirSync(historyDir).filter((f) => f.endsWith('.jsonl'));
  expect(files.length).toBe(runs);
  for (const file of files) {
    const history = await loadHistory(path.join(historyDir, file));
    const verdict = validateHistory(history.entries);
    expect({ file, issues: verdict.issues, interrupted: verdict.interrupted }).toEqual({
      file,
      issues: [],
      interrupted: undefined,
    });
    expect(history.rejected).toHaveLength(0);
    // Every run that made a model call journaled it (a run refused before its first call has nothing to journal).
    const called = history.records.some((r) => r.to === 'ProcessingLLMResponse');
    expect(history.journal.length > 0).toBe(called);
  }
}

describe('runBatch of framework tasks (ToolLoopAgent through mirrorAISDK)', () => {
  it('one at a time: a shared dollar cap stops the batch before the call that would pass it', async () => {
    const calls = { made: 0 };
    const historyDir = path.join(dir, 'serial');
    const report = await runBatch(tasks(calls), {
      concurrency: 1,
      total: { maxCostUsd: 0.5, strict: false },
      pricing,
      historyDir,
      journal: true,
      logger: false,
    });
    // 32 steps of $1/64 reach $0.50 exactly: 16 whole runs, and no call after that.
    expect(report.totals.costUsd).toBe(0.5);
    expect(calls.made).toBe(32);
    const outcomes = report.runs.map((r) => r.outcome);
    expect(outcomes.slice(0, 16)).toEqual(Array(16).fill('end_of_turn'));
    expect(outcomes.slice(16).every((o) => o === 'budget_exceeded' || o === 'skipped')).toBe(true);
    const ran = report.runs.filter((r) => r.historyFile !== undefined).length;
    await checkFolder(historyDir, ran);
    const page = await buildHtmlReport(historyDir, { batch: report });
    expect(page).toMatchObject({ kind: 'batch', runs: 50 });
  });

  it('four at a time: every history validates, the report draws, and spend passes the cap by at most one step per run in flight', async () => {
    const calls = { made: 0 };
    const historyDir = path.join(dir, 'parallel');
    const report = await runBatch(tasks(calls), {
      concurrency: 4,
      total: { maxCostUsd: 0.5, strict: false },
      pricing,
      historyDir,
      journal: true,
      logger: false,
    });
    const spent = report.totals.costUsd;
    expect(spent).toBeGreaterThanOrEqual(0.5);
    expect(spent).toBeLessThanOrEqual(0.5 + 4 * STEP);
    expect(calls.made).toBe(spent / STEP);
    const outcomes = new Set(report.runs.map((r) => r.outcome));
    expect([...outcomes].every((o) => ['end_of_turn', 'budget_exceeded', 'skipped'].includes(o))).toBe(true);
    expect(report.runs.filter((r) => r.outcome === 'end_of_turn').length).toBeLessThan(50);
    const ran = report.runs.filter((r) => r.historyFile !== undefined).length;
    await checkFolder(historyDir, ran);
    expect(await buildHtmlReport(historyDir, { batch: report })).toMatchObject({ kind: 'batch', runs: 50 });
  });

  it('four at a time under a strict shared cap: the call that would pass the cap is never made, so spend stays within it', async () => {
    const calls = { made: 0 };
    const historyDir = path.join(dir, 'strict');
    // Half a step above 32 steps: a 33rd call would pass it (without strict, it would be made).
    const cap = 0.5 + STEP / 2;
    const report = await runBatch(tasks(calls, 1000), {
      concurrency: 4,
      total: { maxCostUsd: cap, strict: true },
      pricing,
      historyDir,
      journal: true,
      logger: false,
    });
    // Each call holds its worst case (1,000 output tokens: one step) before it starts: 32 fit, and only 32 are made.
    expect(report.totals.costUsd).toBe(0.5);
    expect(report.totals.costUsd).toBeLessThanOrEqual(cap);
    expect(calls.made).toBe(32);
    const outcomes = report.runs.map((r) => r.outcome);
    expect(outcomes.filter((o) => o === 'end_of_turn')).toHaveLength(16);
    expect(outcomes.filter((o) => o === 'budget_exceeded')).toHaveLength(34);
    const ran = report.runs.filter((r) => r.historyFile !== undefined).length;
    await checkFolder(historyDir, ran);
    // A refused run's record says what did not fit: the call's hold beside what was spent or held.
    const refused = report.runs.find((r) => r.outcome === 'budget_exceeded' && r.historyFile !== undefined)!;
    const history = await loadHistory(refused.historyFile!);
    const last = history.records.at(-1)!;
    expect(last.to).toBe('Error');
    expect(last.data).toMatchObject({ limit: 'maxCostUsd', max: cap, hold: STEP, outcome: 'budget_exceeded' });
    expect(await buildHtmlReport(historyDir, { batch: report })).toMatchObject({ kind: 'batch', runs: 50 });
  });

  it('under a strict shared cap, a model call without maxOutputTokens is refused before it is made, saying so', async () => {
    const calls = { made: 0 };
    const report = await runBatch(tasks(calls).slice(0, 2), {
      concurrency: 1,
      total: { maxCostUsd: 0.5, strict: true },
      pricing,
      logger: false,
    });
    expect(calls.made).toBe(0);
    expect(report.runs.map((r) => r.outcome)).toEqual(['error', 'error']);
    expect(String(report.runs[0]!.error)).toMatch(/sets no maxOutputTokens/);
  });
});
