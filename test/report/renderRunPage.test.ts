import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { formatSummary } from '../../lib/history/formatSummary';
import { loadHistory } from '../../lib/history/loadHistory';
import { summarizeHistory } from '../../lib/history/summarizeHistory';
import { esc } from '../../lib/report/html';
import { renderRunPage } from '../../lib/report/renderRunPage';
import { failedRun, scriptedMachine, TOOL_TURN } from '../fixtures/agentRun';
import { HOSTILE, writeHostileRun } from '../fixtures/reportRuns';

let dir: string;
beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-sm-runpage-'));
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** The page's data block, read as its script reads it. */
function pageData(html: string): { page: string; s: string[]; runs: Array<{ m: number[][] }> } {
  return JSON.parse(/<script type="application\/json" id="report-data">(.*?)<\/script>/s.exec(html)![1]!);
}

describe('renderRunPage', () => {
  it('renderRunPage() puts the failure panel inspect prints first: where, why, data, the moves before it', () => {
    const records = failedRun().history();
    const html = renderRunPage(records, { file: 'run-42.jsonl' });
    const panel = /<div class="panel failure" id="failure">(.*?)<\/div>/s.exec(html)![1]!;
    expect(panel).toContain('FAILED: the run ended in Error at seq 15 (turn 2, 2025-01-01T12:01:00.114Z)');
    expect(panel).toContain('<dd class="where">SendingToLLM → Error, after 30.0 s in SendingToLLM</dd>');
    expect(panel).toContain('<dd class="why">LLM request failed</dd>');
    expect(panel).toContain(esc('{"status":529,"message":"overloaded"}'));
    expect(panel.match(/<tr>/g)?.length).toBe(1 + 10);
    expect(html.indexOf('id="failure"')).toBeLessThan(html.indexOf('id="run-view"'));
    // The text inspect prints, whole, for whoever wants it.
    expect(html).toContain(esc(formatSummary(summarizeHistory(records), { file: 'run-42.jsonl' })));
    expect(html).toContain('<span class="badge error">error</span>');
  });

  it('renderRunPage() embeds every move for the timeline and the table, and charts time per state', () => {
    const records = failedRun().history();
    const html = renderRunPage(records);
    const data = pageData(html);
    expect(data.page).toBe('run');
    expect(data.runs[0]!.m.map((m) => m[0])).toEqual(records.map((r) => r.seq));
    expect(data.runs[0]!.m.map((m) => data.s[m[2]!])).toEqual(records.map((r) => r.to));
    const chart = /<section id="time-per-state">.*?<\/section>/s.exec(html)![0];
    for (const s of summarizeHistory(records).states) expect(chart).toContain(`>${s.state}</text>`);
    expect(html).toContain('The records carry no usage data.');
  });

  it('renderRunPage() charts cost and tokens over time when the records carry usage', async () => {
    const loaded = await loadHistory(writeHostileRun(dir));
    const html = renderRunPage(loaded.entries);
    const usage = /<section id="usage">.*?<\/section>/s.exec(html)![0];
    expect(usage).toContain('$0.0600 billed, 3,600 input and 900 output tokens, 3 LLM calls, 0 tool calls');
    expect(usage.match(/<path class="line/g)).toHaveLength(3);
  });

  it('renderRunPage() says an unfinished run is incomplete and a good one ok', () => {
    const open = scriptedMachine();
    open.play([['WaitingForUserInput', 'start', 1], ...TOOL_TURN.slice(0, 5)]);
    expect(renderRunPage(open.machine.history())).toContain(
      'INCOMPLETE: the history ends inside turn 1, in RunningTool since seq 6.',
    );
    const ok = scriptedMachine();
    ok.play([['WaitingForUserInput', 'start', 1], ...TOOL_TURN]);
    expect(renderRunPage(ok.machine.history())).toContain('OK: the last turn (1) ended in EndOfTurn.');
    expect(renderRunPage([])).toContain('No transitions recorded.');
  });

  it('renderRunPage() writes no hostile string from the history as markup', async () => {
    const loaded = await loadHistory(writeHostileRun(dir));
    const html = renderRunPage(loaded.entries, { file: `${HOSTILE.img}.jsonl` });
    for (const markup of ['<script>window', '<img', '<!--']) expect(html).not.toContain(markup);
    // In the data block, the line separators old JavaScript parsers took for line ends are escaped too.
    expect(/id="report-data">(.*?)<\/script>/s.exec(html)![1]).not.toMatch(/[\u2028\u2029]/);
    expect(html.match(/<script/g)).toHaveLength(2);
    expect(html).not.toMatch(/<[^>]*\son[a-z]+\s*=/i); // no event-handler attribute in any tag
    expect(html).toContain(esc(HOSTILE.img));
  });

  it('renderRunPage() names bad arguments', () => {
    expect(() => renderRunPage(42 as never)).toThrow(/`items`/);
    expect(() => renderRunPage([], { maxDataChars: 0 })).toThrow(/`maxDataChars` to be a positive integer, got `0`/);
    expect(() => renderRunPage([], { file: 3 as never })).toThrow(/`file`/);
    expect(() => renderRunPage([{ seq: 'x' } as never])).toThrow(/items\[0\]/);
  });
});
