import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import {
  createScriptedAgent,
  DEFAULT_TABLE,
  extendTable,
  formatBatchReport,
  runBatch,
  WRAP_UP_EXTENSION,
  type BatchOptions,
  type BatchTask,
  type Pricing,
  type ScriptedReply,
} from '../../lib/index';
import { loadHistory } from '../../lib/subpaths/history';
import { manualClock } from '../helpers/manualClock';

// $1 per million input tokens, $4 per million output tokens; each request is bounded at 1,000
// in and 1,000 out ($0.005), and each tool round costs exactly that. The final call after one
// is held at 1,000 + 2 × 1,000 + 64 input tokens and 1,000 output tokens: $0.007064.
const pricing: Pricing = (u) => (u.inputTokens ?? 0) * 1e-6 + (u.outputTokens ?? 0) * 4e-6;
const bound = { inputTokens: 1000, maxOutputTokens: 1000, model: 'm' };
const TABLE = extendTable(DEFAULT_TABLE, WRAP_UP_EXTENSION);
const round: ScriptedReply = {
  toolCalls: [{ id: 'c1', name: 'look' }],
  model: 'm',
  usage: { inputTokens: 1000, outputTokens: 1000 },
};

/** A task that would call tools forever: only a cap ends it. */
function endless(id: string): BatchTask {
  return {
    id,
    input: `work on ${id}`,
    agent: () =>
      createScriptedAgent({
        replies: Array.from({ length: 50 }, () => round),
        finalReply: { text: `answer of ${id}`, model: 'm', usage: { inputTokens: 1000, outputTokens: 100 } },
        bound,
        tools: { look: { output: 'seen' } },
        sleep: async () => undefined,
      }),
  };
}

const base = (): BatchOptions => ({
  logger: false,
  clock: manualClock().now,
  sleep: async () => undefined,
  pricing,
  table: TABLE,
  minOutputTokens: 1000,
});

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-sm-wrapup-'));
});
afterEach(() => {
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('runBatch with wrapUp', () => {
  it('perRun: each run ends wrapped_up with its answer within its own cap, in the report and its history file', async () => {
    const tasks = [endless('a'), endless('b'), endless('c')];
    const report = await runBatch(tasks, {
      ...base(),
      concurrency: 2,
      historyDir: dir,
      perRun: { maxCostUsd: 0.03, strict: true, wrapUp: true },
    });
    expect(report.runs.map((r) => r.outcome)).toEqual(['wrapped_up', 'wrapped_up', 'wrapped_up']);
    for (const run of report.runs) expect(run.usage.costUsd).toBeLessThanOrEqual(0.03);
    expect(report.totals.outcomes.wrapped_up).toBe(3);
    expect(formatBatchReport(report)).toMatch(/wrapped_up\s+3/);
    const history = await loadHistory(path.join(dir, 'a.jsonl'));
    const last = history.records.at(-1)!;
    expect(last.to).toBe('EndOfTurn');
    expect(last.data).toMatchObject({ outcome: 'wrapped_up', answer: 'answer of a' });
    expect(history.records.some((r) => r.to === 'WrappingUp')).toBe(true);
  });

  it('total: runs sharing one strict pool each keep their own final call held inside it, and the pool is never passed', async () => {
    const tasks = Array.from({ length: 4 }, (_, i) => endless(`t${i}`));
    const report = await runBatch(tasks, {
      ...base(),
      concurrency: 4,
      total: { maxCostUsd: 0.06, strict: true, wrapUp: true },
    });
    expect(report.totals.costUsd).toBeLessThanOrEqual(0.06);
    // Every run that started ends with an answer; none is stopped by the pool.
    const started = report.runs.filter((r) => r.outcome !== 'skipped');
    expect(started.length).toBeGreaterThan(0);
    for (const run of started) expect(run.outcome).toBe('wrapped_up');
    expect(report.totals.outcomes.budget_exceeded).toBe(0);
  });
});
