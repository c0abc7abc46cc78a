import type { RunReport } from '../../lib/batch/runBatch';
import { RunSkippedError } from '../../lib/batch/RunSkippedError';
import { emptyUsage } from '../../lib/agent/UsageTotals';
import type { TransitionRecord } from '../../lib/machine/TransitionRecord';
import { BatchPageBuilder, renderBatchPage } from '../../lib/report/renderBatchPage';
import { DEFAULT_TABLE } from '../../lib/machine/transitions';
import { failedRun, T0 } from '../fixtures/agentRun';
import { HOSTILE } from '../fixtures/reportRuns';
import { failuresRows } from '../helpers/failuresRows';

type Data = {
  page: string;
  runs: unknown[];
  rows: Array<[number, string, string, number, number, number, number, string, string, number, number, number]>;
};
const pageData = (html: string): Data => JSON.parse(/id="report-data">(.*?)<\/script>/s.exec(html)![1]!);

/** A one-call run that ends as `to`, charged `cost`. */
function run(start: number, cost: number, to = 'EndOfTurn'): TransitionRecord<string>[] {
  return [
    {
      seq: 1,
      from: 'Ready',
      to: 'WaitingForUserInput',
      description: 'start',
      at: start + 1,
      durationMs: 1,
      forced: false,
    },
    {
      seq: 2,
      from: 'WaitingForUserInput',
      to: 'SendingToLLM',
      description: 'send',
      at: start + 2,
      durationMs: 1,
      forced: false,
    },
    {
      seq: 3,
      from: 'SendingToLLM',
      to: 'ProcessingLLMResponse',
      description: 'reply',
      data: { usage: { inputTokens: 100, outputTokens: 20, costUsd: cost, llmCalls: 1, toolCalls: 2 } },
      at: start + 100,
      durationMs: 98,
      forced: false,
    },
    { seq: 4, from: 'ProcessingLLMResponse', to, description: 'done', at: start + 101, durationMs: 1, forced: false },
  ];
}

const report = (
  id: string,
  outcome: RunReport['outcome'],
  costUsd: number,
  extra: Partial<RunReport> = {},
): RunReport => ({
  id,
  outcome,
  usage: { ...emptyUsage(), costUsd, llmCalls: 3 },
  durationMs: 500,
  transitions: 0,
  ...extra,
});

describe('renderBatchPage', () => {
  it('renderBatchPage() lists each run with its outcome, cost, calls, duration and final state, read from its history', () => {
    const html = renderBatchPage([
      { id: 'a', history: run(T0, 0.25) },
      { id: 'b', history: run(T0 + 50, 0.5, 'Error') },
      { id: 'c', history: failedRun().history() },
    ]);
    const data = pageData(html);
    expect(data.page).toBe('batch');
    expect(data.rows).toEqual([
      [0, 'a', 'end_of_turn', 0.25, 1, 2, 101, 'EndOfTurn', '', 0, 0, 0],
      [1, 'b', 'error', 0.5, 1, 2, 101, 'Error', 'done', 0, 0, 0],
      [2, 'c', 'error', 0, 0, 0, 60_114, 'Error', 'LLM request failed', 0, 0, 0],
    ]);
    expect(data.runs).toHaveLength(3);
    expect(html).toContain('<h1>Batch of 3 runs</h1>');
    expect(html).toMatch(/<text class="label"[^>]*>end_of_turn<\/text>/);
  });

  it('renderBatchPage() counts the usage a run’s last record carries, tool calls that moved no chart included', () => {
    const history = run(T0, 0.25, 'Error');
    // The turn's end records the usage so far: a third tool call ran, then failed the turn.
    const last = history[3]!;
    history[3] = {
      ...last,
      data: {
        outcome: 'error',
        usage: { inputTokens: 100, outputTokens: 20, costUsd: 0.25, llmCalls: 1, toolCalls: 3, wallMs: 90 },
      },
    };
    expect(pageData(renderBatchPage([{ id: 'a', history }])).rows).toEqual([
      [0, 'a', 'error', 0.25, 1, 3, 101, 'Error', 'done', 0, 0, 0],
    ]);
  });

  it('renderBatchPage() charts spend over time against the batch cap and shows each cap used', () => {
    const html = renderBatchPage([{ history: run(T0, 0.25) }, { history: run(T0 + 1000, 0.5) }], {
      limits: { total: { maxCostUsd: 1, maxLlmCalls: 4 }, perRun: { maxCostUsd: 0.6 } },
      concurrency: 2,
    });
    expect(html).toContain('<td>cost</td><td class="num">$0.7500</td><td class="num">$1.0000 (75%)</td>');
    expect(html).toContain('<td>LLM calls</td><td class="num">2</td><td class="num">4 (50%)</td>');
    expect(html).toContain('<td class="num">$0.6000</td>');
    expect(html).toContain('batch cap $1.00');
    expect(html).toContain('concurrency 2');
    // Two steps: $0.25 at +100 ms, $0.75 at +1,100 ms.
    const path = /<path class="line s-cost" d="([^"]+)"/.exec(html)![1]!;
    expect(path.match(/V/g)).toHaveLength(2);
  });

  it('renderBatchPage() takes the caps runBatch wrote into the histories when none are given', () => {
    const meta = {
      kind: 'meta' as const,
      line: 1,
      meta: {
        type: 'meta' as const,
        version: '0',
        runId: 'x',
        startedAt: T0,
        table: { initial: 'Ready', states: [], edges: [], terminal: [], error: [] },
        metadata: { batch: { limits: { total: { maxCostUsd: 2, maxTokens: 'lots' } }, concurrency: 8 } },
      },
      table: DEFAULT_TABLE,
    };
    const entries = [meta, ...run(T0, 0.5).map((record, i) => ({ kind: 'record' as const, line: i + 2, record }))];
    const html = renderBatchPage([{ history: entries as never }]);
    expect(html).toContain('$2.0000 (25%)');
    expect(html).toContain('<td>tokens</td><td class="num">120</td><td class="num">—</td>');
    expect(html).toContain('concurrency 8');
  });

  it('renderBatchPage() prefers a run’s report, and lists runs that have no history', () => {
    const html = renderBatchPage([
      { report: report('a', 'end_of_turn', 0.3), history: run(T0, 0.25) },
      {
        report: report('skipped-1', 'skipped', 0, {
          durationMs: 0,
          error: new RunSkippedError('budget_exceeded', 'the batch budget is spent'),
        }),
      },
    ]);
    expect(pageData(html).rows).toEqual([
      [0, 'a', 'end_of_turn', 0.3, 3, 0, 500, 'EndOfTurn', '', 0, 0, 0],
      [-1, 'skipped-1', 'skipped', 0, 3, 0, 0, '', 'the batch budget is spent', 0, 0, 0],
    ]);
  });

  it('BatchPageBuilder.addUnreadable() lists a file that could not be read, with why', () => {
    const builder = new BatchPageBuilder();
    builder.addUnreadable('runs/x.jsonl', 'corrupt line 3');
    expect(builder.size).toBe(1);
    expect(pageData(builder.render()).rows).toEqual([
      [-1, 'runs/x.jsonl', 'unreadable', 0, 0, 0, 0, '', 'corrupt line 3', 0, 0, 0],
    ]);
  });

  it('renderBatchPage() heads the page with the runs that did not end well, the worst first, reasons escaped', () => {
    const html = renderBatchPage([
      { id: 'ok', history: run(T0, 0.1) },
      { report: report('gone', 'cancelled', 0.05, { error: new Error(HOSTILE.script) }) },
      { report: report('never', 'skipped', 0, { error: new RunSkippedError('aborted', 'the batch was aborted') }) },
      { report: report('over', 'budget_exceeded', 0.5, { error: new Error(HOSTILE.img) }) },
      { report: report('boom', 'error', 0.2, { error: new Error('model overloaded') }) },
      { report: report('stuck', 'stalled', 0.3, { error: new Error('no progress in 5 turns') }) },
    ]);
    expect(failuresRows(html)!.map((r) => [r.cells, r.href])).toEqual([
      [['boom', 'error', 'model overloaded', '$0.2000'], '#run-4'],
      [['over', 'budget_exceeded', HOSTILE.img, '$0.5000'], '#run-3'],
      [['stuck', 'stalled', 'no progress in 5 turns', '$0.3000'], '#run-5'],
      [['gone', 'cancelled', HOSTILE.script, '$0.0500'], '#run-1'],
      [['never', 'skipped', 'the batch was aborted', '$0.0000'], '#run-2'],
    ]);
    // Reasons are data: never markup. The only script tags are the page's two.
    expect(html).not.toContain(HOSTILE.img);
    expect(html.match(/<script/g)).toHaveLength(2);
    // Above the dashboard: the failures table is the page's first table.
    expect(html.indexOf('<table')).toBe(html.indexOf('<table id="failures">'));
    expect(html).toContain('5 runs of 6 did not end well, the worst first.');
  });

  it('renderBatchPage() says in one line that no run failed', () => {
    const html = renderBatchPage([{ history: run(T0, 0.1) }, { history: run(T0 + 10, 0.2) }]);
    expect(failuresRows(html)).toBeUndefined();
    expect(html).toContain('<p class="all-well">No failures: all 2 runs ended well.</p>');
  });

  it('renderBatchPage() shows the worst 100 failures of many, with the count of them all', () => {
    const runs = Array.from({ length: 250 }, (_, i) => ({
      report: report(`r${i}`, i % 2 === 0 ? 'cancelled' : 'error', 0.01),
    }));
    const html = renderBatchPage(runs);
    const rows = failuresRows(html)!;
    expect(rows).toHaveLength(100);
    // The 125 errors come before any cancelled run.
    expect(rows.every((r) => r.cells[1] === 'error')).toBe(true);
    expect(rows[0]!.cells[0]).toBe('r1');
    expect(html).toContain('the worst 100 of 250 shown; the runs table below lists them all (filter it by outcome)');
  });

  it('renderBatchPage() marks a run resumed after a crash on its rows, in the header and on the spend timeline', () => {
    const html = renderBatchPage([
      { id: 'ok', history: run(T0, 0.1) },
      {
        id: 'again',
        history: run(T0 + 5000, 0.2, 'Error'),
        cutOffAttempts: [{ costUsd: 0.125, endedAt: T0 + 1000 }],
      },
      { id: 'unsaid', history: run(T0 + 6000, 0.2), cutOffAttempts: [{ costUsd: undefined, endedAt: undefined }] },
    ]);
    const mark = 'resumed after a crash: 1 cut-off attempt set aside, which spent $0.1250';
    expect(failuresRows(html)!.map((r) => r.cells)).toEqual([['again', 'error', `done ${mark}`, '$0.2000']]);
    const notes = pageData(html).rows.map((r) => r[8]);
    expect(notes[0]).toBe('');
    expect(notes[1]).toBe(`${mark}; restarted from the beginning; done`);
    expect(notes[2]).toBe('resumed after a crash: 1 cut-off attempt set aside; restarted from the beginning');
    expect(html).toContain(
      '<strong>Resumed after a crash:</strong> 2 runs went on from 2 cut-off attempts set aside beside their files (*.interrupted); what they spent is counted in the figures above, each call once.',
    );
    // The crash (the attempt's last move, +1 s) before the resume (the run's start, +5 s); the third run's attempt says no time.
    const xs = (cls: string): number[] =>
      [...html.matchAll(new RegExp(`<line class="mark ${cls}" x1="([\\d.]+)"`, 'g'))].map((m) => Number(m[1]));
    expect(xs('crash')).toHaveLength(1);
    expect(xs('resume')).toHaveLength(2);
    expect(xs('crash')[0]).toBeLessThan(xs('resume')[0]!);
    expect(html).toContain('crash: an attempt cut off</text>');
  });

  it('renderBatchPage() shows no crash and no resume for a batch that had none', () => {
    const html = renderBatchPage([{ id: 'ok', history: run(T0, 0.1) }]);
    expect(html).not.toContain('Resumed after a crash');
    expect(html).not.toContain('class="mark ');
  });

  it('renderBatchPage() names bad arguments', () => {
    expect(() => renderBatchPage(5 as never)).toThrow(/`runs`/);
    expect(() => renderBatchPage([{ id: 'a' }])).toThrow(/runs\[0\].*a run with a `history`, a `report`, or both/);
    expect(() => renderBatchPage([{ report: { id: 'x' } as never }])).toThrow(/runs\[0\]\.report/);
    expect(() => renderBatchPage([], { maxDataChars: -1 })).toThrow(/`maxDataChars`/);
    expect(() => renderBatchPage([], null as never)).toThrow(/`options`/);
  });
});
