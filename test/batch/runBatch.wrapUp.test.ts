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
import fc from 'fast-check';
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

describe('runBatch with total.wrapUp, runs interleaved (property)', () => {
  // Each reply takes a seeded number of microtask turns, so the runs' calls interleave in every
  // order: no run's final call may lose the room its reserve kept to another run.
  const ticks = async (n: number): Promise<void> => {
    for (let i = 0; i < n; i++) await Promise.resolve();
  };
  function interleaved(id: string, delays: number[]): BatchTask {
    return {
      id,
      input: `work on ${id}`,
      agent: () =>
        createScriptedAgent({
          replies: Array.from({ length: 50 }, (_, i) => ({ ...round, delayMs: delays[i % delays.length]! })),
          finalReply: {
            text: `answer of ${id}`,
            model: 'm',
            usage: { inputTokens: 1000, outputTokens: 100 },
            delayMs: delays[0]!,
          },
          bound,
          tools: { look: { output: 'seen' } },
          sleep: (ms) => ticks(ms),
        }),
    };
  }

  it('every run that made a call ends wrapped_up with its answer, and the pool is never passed', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          delays: fc.array(fc.array(fc.nat(12), { minLength: 1, maxLength: 6 }), { minLength: 2, maxLength: 8 }),
          concurrency: fc.integer({ min: 2, max: 6 }),
          capUsd: fc.constantFrom(0.03, 0.05, 0.08, 0.13),
        }),
        async ({ delays, concurrency, capUsd }) => {
          const tasks = delays.map((d, i) => interleaved(`t${i}`, d));
          const report = await runBatch(tasks, {
            ...base(),
            concurrency,
            total: { maxCostUsd: capUsd, strict: true, wrapUp: true },
          });
          expect(report.totals.costUsd).toBeLessThanOrEqual(capUsd + 1e-12);
          // A run that made a call ends with an answer; one started when the pool could not hold
          // even its first call beside its final one makes none, and says so.
          for (const run of report.runs) {
            if (run.outcome === 'skipped') continue;
            if (run.usage.llmCalls === 0)
              expect(run.error?.message).toMatch(/^(the batch's total budget|Expected `the batch's total budget)/);
            else expect([run.id, run.outcome]).toEqual([run.id, 'wrapped_up']);
          }
        },
      ),
      { numRuns: 60, seed: 20261128 },
    );
  });
});
