import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createScriptedAgent, type ScriptedReply } from '../../lib/agent/createScriptedAgent';
import { runBatch } from '../../lib/batch/runBatch';
import {
  BudgetExceededError,
  formatBatchReport,
  InvalidArgumentError,
  LLMCallError,
  RunSkippedError,
  type BatchReport,
  type RunReport,
  type UsageTotals,
} from '../../lib/index';

const usage = (costUsd: number, llmCalls: number, toolCalls = 0): UsageTotals => ({
  inputTokens: llmCalls * 1000,
  outputTokens: llmCalls * 50,
  costUsd,
  toolCalls,
  llmCalls,
  wallMs: 0,
  uncertainUsd: 0,
  releasedUsd: 0,
  unpricedCalls: 0,
});
const zero = usage(0, 0);
const budgetMessage = 'shared budget exceeded: $1.0200 of $1.0000 after 31 LLM calls';

const runs: RunReport[] = [
  {
    id: 'fix-parse',
    outcome: 'end_of_turn',
    usage: usage(0.21, 4, 3),
    durationMs: 2_400,
    transitions: 31,
    historyFile: '/tmp/runs/fix-parse.jsonl',
  },
  {
    id: 'fix-lexer',
    outcome: 'end_of_turn',
    usage: usage(0.09, 2, 1),
    durationMs: 850,
    transitions: 14,
    historyFile: '/tmp/runs/fix-lexer.jsonl',
  },
  {
    id: 'flaky-net',
    outcome: 'error',
    usage: usage(0, 3),
    durationMs: 65_000,
    transitions: 3,
    historyFile: '/tmp/runs/flaky-net.jsonl',
    error: new LLMCallError(
      'sendUserMessage',
      [
        { attempt: 1, error: '529 overloaded' },
        { attempt: 2, error: '529 overloaded' },
        { attempt: 3, error: '529 overloaded' },
      ],
      new Error('529 overloaded'),
    ),
  },
  {
    id: 'big-refactor',
    outcome: 'budget_exceeded',
    usage: usage(0.72, 22, 20),
    durationMs: 12_300,
    transitions: 190,
    historyFile: '/tmp/runs/big-refactor.jsonl',
    error: new BudgetExceededError(budgetMessage, 'maxCostUsd', 1.02, 1),
  },
  {
    id: 'docs',
    outcome: 'skipped',
    usage: zero,
    durationMs: 0,
    transitions: 0,
    error: new RunSkippedError('budget_exceeded', budgetMessage),
  },
  {
    id: 'typos',
    outcome: 'skipped',
    usage: zero,
    durationMs: 0,
    transitions: 0,
    error: new RunSkippedError('budget_exceeded', budgetMessage),
  },
];

const report: BatchReport = {
  runs,
  totals: {
    inputTokens: 31_000,
    outputTokens: 1_550,
    costUsd: 1.02,
    toolCalls: 24,
    llmCalls: 31,
    wallMs: 80_550,
    uncertainUsd: 0,
    releasedUsd: 0,
    unpricedCalls: 0,
    outcomes: { end_of_turn: 2, wrapped_up: 0, budget_exceeded: 1, stalled: 0, error: 1, cancelled: 0, skipped: 2 },
  },
  limits: { perRun: { maxCostUsd: 0.75, maxLlmCalls: 40 }, total: { maxCostUsd: 1, maxWallMs: 600_000 } },
  concurrency: 4,
  durationMs: 78_000,
  stopped: { reason: 'budget_exceeded', message: budgetMessage },
};

describe('formatBatchReport', () => {
  it('summarizes outcomes, spend against the caps, durations, the slowest runs and the failures', () => {
    expect(formatBatchReport(report)).toMatchInlineSnapshot(`
     "Batch of 6 runs, concurrency 4, in 1 minute 18 seconds
     Stopped early: shared budget exceeded: $1.0200 of $1.0000 after 31 LLM calls

     Runs by outcome
       end_of_turn      2
       wrapped_up       0
       budget_exceeded  1
       stalled          0
       error            1
       cancelled        0
       skipped          2
       total            6

     Spend against the caps
                                  used         batch cap  per-run cap
       cost                    $1.0200    $1.0000 (102%)      $0.7500
       tokens                   32,550                 —            —
       LLM calls                    31                 —           40
       tool calls                   24                 —            —
       wall time   1 minute 18 seconds  10 minutes (13%)            —
       Money: $1.0200 billed

     Durations of the 4 runs that started: median 2.4 s, p90 1 minute 5 seconds, max 1 minute 5 seconds

     Slowest 4 runs
       flaky-net     1 minute 5 seconds  error            $0.0000   3 LLM calls    3 moves
       big-refactor              12.3 s  budget_exceeded  $0.7200  22 LLM calls  190 moves
       fix-parse                  2.4 s  end_of_turn      $0.2100   4 LLM calls   31 moves
       fix-lexer                 850 ms  end_of_turn      $0.0900   2 LLM calls   14 moves

     Runs that did not end normally: 2
       flaky-net  error: sendUserMessage failed after 3 attempts: 529 overloaded
         history: /tmp/runs/flaky-net.jsonl
       big-refactor  budget_exceeded: shared budget exceeded: $1.0200 of $1.0000 after 31 LLM calls
         history: /tmp/runs/big-refactor.jsonl"
    `);
  });

  it('limits the lists with `slowest` and `failures`, and says how many were left out', () => {
    const text = formatBatchReport(report, { slowest: 1, failures: 1 });
    expect(text).toContain('Slowest 1 run\n  flaky-net');
    expect(text).toContain('Runs that did not end normally: 2 (first 1)');
    expect(text).not.toContain('big-refactor  budget_exceeded:');
    const none = formatBatchReport(report, { slowest: 0, failures: 0 });
    expect(none).not.toContain('Slowest');
    expect(none).not.toContain('did not end normally');
  });

  it('handles a batch where nothing started, and one with no caps', () => {
    const empty: BatchReport = {
      runs: [
        {
          id: 'a',
          outcome: 'skipped',
          usage: zero,
          durationMs: 0,
          transitions: 0,
          error: new RunSkippedError('aborted', 'batch aborted'),
        },
      ],
      totals: {
        ...zero,
        outcomes: { end_of_turn: 0, wrapped_up: 0, budget_exceeded: 0, stalled: 0, error: 0, cancelled: 0, skipped: 1 },
      },
      limits: {},
      concurrency: 1,
      durationMs: 0,
      stopped: { reason: 'aborted', message: 'batch aborted' },
    };
    const text = formatBatchReport(empty);
    expect(text).toContain('Batch of 1 run, concurrency 1, in 0 ms\nStopped early: batch aborted');
    expect(text).toContain('  cost        $0.0000          —            —');
    expect(text).not.toContain('Durations');
  });

  it('names a value that is not a batch report, and the part that is wrong', () => {
    expect(() => formatBatchReport(null as never)).toThrow(
      'Expected `report` to be a BatchReport from runBatch(), got `null`',
    );
    expect(() => formatBatchReport({ ...report, runs: undefined } as never)).toThrow(
      'Expected `report.runs` to be an array of run reports, got `undefined`',
    );
    expect(() => formatBatchReport({ ...report, runs: [report.runs[0], null] } as never)).toThrow(
      /^Expected `report.runs\[1\]` to be a run report .*, got `null`$/,
    );
    expect(() => formatBatchReport({ ...report, totals: {} } as never)).toThrow(
      /^Expected `report.totals` to be usage totals with `outcomes`/,
    );
    expect(() => formatBatchReport(report, null as never)).toThrow('Expected `options` to be an object, got `null`');
  });

  it('rejects bad options, naming them', () => {
    expect(() => formatBatchReport(report, { slowest: -1 })).toThrow(InvalidArgumentError);
    expect(() => formatBatchReport(report, { failures: 1.5 })).toThrow(
      'Expected `failures` to be a non-negative integer, got `1.5` (number)',
    );
  });

  it('says, with resume, how each run went on: finished earlier, continued from call N, restarted, new', () => {
    const resumedReport: BatchReport = {
      ...report,
      runs: [
        { ...report.runs[0]!, resumed: 'finished' },
        {
          ...report.runs[1]!,
          resumed: 'recovered',
          resume: { mode: 'recovered', recordedCalls: 2, servedTools: 1, rerunTools: 0, interruptedTools: 1 },
        },
        {
          ...report.runs[2]!,
          resumed: 'restarted',
          resume: {
            mode: 'restarted',
            reason: 'the agent loop has no acceptRecorded operation',
            recordedCalls: 0,
            servedTools: 0,
            rerunTools: 0,
            interruptedTools: 0,
          },
        },
        ...report.runs.slice(3),
      ],
    };
    const text = formatBatchReport(resumedReport);
    const others = report.runs.length - 3;
    expect(text).toContain(
      `Resumed: 1 finished earlier (not run again), 1 recovered from their journal, 1 restarted, ${others} new\n` +
        `  ${report.runs[1]!.id}  recovered from its journal at LLM call 3 (2 responses served; 1 tool result served, 1 tool call answered as interrupted)\n` +
        `  ${report.runs[2]!.id}  restarted from the beginning: the agent loop has no acceptRecorded operation\n`,
    );
    expect(formatBatchReport(report)).not.toContain('Resumed');
  });

  it('lists the runs that parked for approval: how long each waited, for how many calls, and how it ended', () => {
    const parkedReport: BatchReport = {
      ...report,
      runs: [
        { ...report.runs[0]!, approval: { waits: 1, calls: 1, waitedMs: 1_500 } },
        { ...report.runs[1]!, approval: { waits: 2, calls: 3, waitedMs: 600 } },
        ...report.runs.slice(2),
      ],
    };
    expect(formatBatchReport(parkedReport)).toContain(
      'Parked for approval: 2 runs, 2.1 s waited in all\n' +
        `  ${report.runs[0]!.id}  waited 1.5 s for 1 approval, then end_of_turn\n` +
        `  ${report.runs[1]!.id}  waited 600 ms for 3 approvals over 2 waits, then end_of_turn\n`,
    );
    expect(formatBatchReport(report)).not.toContain('Parked');
  });
});

describe('formatBatchReport of a resumed batch', () => {
  let dir: string;
  beforeEach(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-sm-resumed-report-'))));
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('gives runs that ended before the resume their recorded reason and duration, read back from their files', async () => {
    const instant = async (): Promise<void> => undefined;
    const COST = { inputTokens: 100, outputTokens: 10, costUsd: 0.1 };
    const replies = (id: string): ScriptedReply[] =>
      id === 'task-03' ? [{ error: 'model overloaded' }] : [{ text: 'done', usage: COST }];
    const tasks = ['task-01', 'task-02', 'task-03'].map((id) => ({
      id,
      input: 'go',
      agent: () => createScriptedAgent({ sleep: instant, replies: replies(id) }),
    }));
    // Every reading of the clock is a second later: each run takes seconds, not 0 ms.
    let now = Date.UTC(2026, 0, 1);
    const clock = (): number => (now += 1000);
    const first = await runBatch(tasks, {
      historyDir: dir,
      concurrency: 1,
      logger: false,
      retry: { retries: 0 },
      clock,
    });
    const live = first.runs.find((r) => r.id === 'task-03')!;
    expect(live.error?.message).toBe('sendUserMessage failed after 1 attempt: model overloaded');

    const resumed = await runBatch(tasks, {
      historyDir: dir,
      concurrency: 1,
      logger: false,
      retry: { retries: 0 },
      clock,
      resume: true,
    });
    expect(resumed.runs.map((r) => [r.id, r.outcome, r.resumed])).toEqual([
      ['task-01', 'end_of_turn', 'finished'],
      ['task-02', 'end_of_turn', 'finished'],
      ['task-03', 'error', 'finished'],
    ]);
    const failed = resumed.runs[2]!;
    expect(failed.error?.message).toBe(live.error?.message);
    for (const run of resumed.runs) expect(run.durationMs).toBeGreaterThan(0);
    const text = formatBatchReport(resumed);
    expect(text).toContain('  task-03  error: sendUserMessage failed after 1 attempt: model overloaded');
    expect(text).not.toContain('no reason recorded');
    expect(text).not.toMatch(/median 0 ms/);
  });
});
