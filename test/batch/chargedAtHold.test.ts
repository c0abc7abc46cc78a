import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import {
  createScriptedAgent,
  formatBatchReport,
  runBatch,
  type Pricing,
  type ScriptedAgent,
  type ScriptedReply,
} from '../../lib/index';
import { loadHistory, runFacts } from '../../lib/subpaths/history';

// $5 per million tokens in or out, for gpt-local only: a call bounded at 1,000 + 1,000 tokens
// may cost $0.01, and costs that when it uses its bound. The provider answers under a dated id.
const pricing: Pricing = (u, { model }) =>
  model === 'gpt-local' ? ((u.inputTokens ?? 0) + (u.outputTokens ?? 0)) * 5e-6 : undefined;
const bound = { inputTokens: 1000, maxOutputTokens: 1000, model: 'gpt-local' };
const CAP = 0.3;

async function batchOf(replies: () => ScriptedReply[], dir: string) {
  const agents: ScriptedAgent[] = [];
  const tasks = Array.from({ length: 40 }, (_, i) => ({
    id: `t${i}`,
    input: 'go',
    agent: () => {
      const agent = createScriptedAgent({ replies: replies(), bound, sleep: async () => undefined });
      agents.push(agent);
      return agent;
    },
  }));
  // Every request that reached the "provider" is billed at its bound (its max output tokens, as
  // lowered to fit), answered or not.
  const billed = (): number =>
    agents.reduce(
      (sum, a) =>
        a.calls.reduce(
          (s, c) => (c.op === 'sendUserMessage' ? s + (1000 + (c.maxOutputTokens ?? 1000)) * 5e-6 : s),
          sum,
        ),
      0,
    );
  const report = await runBatch(tasks, {
    logger: false,
    concurrency: 4,
    pricing,
    total: { maxCostUsd: CAP, strict: true },
    historyDir: dir,
    ledger: true,
    retry: { retries: 2, shouldRetry: () => true },
    sleep: async () => undefined,
  });
  return { report, billed };
}

describe('runBatch under a strict total: money that may have been spent counts as spent', () => {
  let dir: string;
  beforeEach(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), 'charged-at-hold-'))));
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it.each([
    [
      'a response under a model id the prices lack',
      () => [{ text: 'ok', model: 'gpt-local-2025-01-01', usage: { inputTokens: 1000, outputTokens: 1000 } }],
    ],
    [
      'failed attempts retried (a 500 after the request left)',
      () => [{ error: 'HTTP 500' }, { error: 'HTTP 500' }, { error: 'HTTP 500' }],
    ],
  ])('%s: billed stays within the cap, and the report and the files count it', async (_, replies) => {
    const { report, billed } = await batchOf(replies as () => ScriptedReply[], dir);
    expect(billed()).toBeGreaterThan(0);
    expect(billed()).toBeLessThanOrEqual(CAP + 1e-9);
    expect(report.totals.costUsd).toBeGreaterThanOrEqual(billed() - 1e-9);
    expect(report.totals.costUsd).toBeLessThanOrEqual(CAP);
    expect(formatBatchReport(report)).toMatch(
      new RegExp(`cost\\s+\\$${report.totals.costUsd.toFixed(4).replace('.', '\\.')}`),
    );
    // Each run's file says what it spent, by the ledger's rule: the same as the run's report.
    let files = 0;
    for (const run of report.runs) {
      if (run.historyFile === undefined) continue;
      const loaded = await loadHistory(run.historyFile);
      expect(runFacts(loaded.entries).spend.costUsd).toBeCloseTo(run.usage.costUsd, 10);
      files += loaded.journal.filter(
        (l) => typeof (l as { chargedAtHold?: unknown }).chargedAtHold === 'string',
      ).length;
    }
    expect(files).toBeGreaterThan(0);
  });
});
