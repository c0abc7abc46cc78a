import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createScriptedAgent } from '../../lib/agent/createScriptedAgent';
import { lockFolder } from '../../lib/batch/keeping/lockFolder';
import { runBatch } from '../../lib/batch/runBatch';
import { HistoryFileError } from '../../lib/history/HistoryFileError';
import { buildHtmlReport } from '../../lib/report/buildHtmlReport';
import { writeBatch, writeHostileRun } from '../fixtures/reportRuns';
import { failuresRows } from '../helpers/failuresRows';

type Rows = Array<[number, string, string, number, number, number, number, string, string]>;
const rows = (html: string): Rows => JSON.parse(/id="report-data">(.*?)<\/script>/s.exec(html)![1]!).rows;

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-sm-build-'));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('buildHtmlReport', () => {
  it('buildHtmlReport() makes a run page from a history file', async () => {
    const file = writeHostileRun(dir);
    const report = await buildHtmlReport(file);
    expect(report).toMatchObject({ kind: 'run', runs: 1, warnings: [] });
    expect(report.html).toContain(`<p class="sub">${file} · agent-state-machine`);
    expect(report.html).toContain('id="failure"');
  });

  it('buildHtmlReport() makes a batch page from every *.jsonl of a folder, in name order, caps from the files', async () => {
    writeBatch(dir, 5);
    fs.writeFileSync(path.join(dir, 'notes.txt'), 'not a history');
    const report = await buildHtmlReport(dir);
    expect(report).toMatchObject({ kind: 'batch', runs: 5, warnings: [] });
    expect(rows(report.html).map((r) => [r[1], r[2]])).toEqual([
      ['task-000', 'end_of_turn'],
      ['task-001', 'error'],
      ['task-002', 'cancelled'],
      ['task-003', 'end_of_turn'],
      ['task-004', 'end_of_turn'],
    ]);
    expect(report.html).toContain('$2.0000 (');
    expect(report.html).toContain('concurrency 4');
  });

  it('buildHtmlReport() lists a file it cannot read as unreadable and says so, and keeps a cut last line as a warning', async () => {
    writeBatch(dir, 2);
    fs.writeFileSync(path.join(dir, 'broken.jsonl'), 'not json\n{"also": "not"}\n');
    fs.appendFileSync(path.join(dir, 'task-001.jsonl'), '{"seq":');
    const report = await buildHtmlReport(dir);
    expect(rows(report.html).map((r) => [r[1], r[2]])).toEqual([
      [path.join(dir, 'broken.jsonl'), 'unreadable'],
      ['task-000', 'end_of_turn'],
      ['task-001', 'error'],
    ]);
    expect(report.warnings).toHaveLength(2);
    expect(report.warnings[0]).toMatch(/broken\.jsonl:1: corrupt line.*\(listed as unreadable\)$/);
    expect(report.warnings[1]).toMatch(/task-001\.jsonl:\d+: the last line is incomplete/);
  });

  it('buildHtmlReport() takes runBatch’s report: its caps, and the runs with no history file', async () => {
    const reply = { text: 'done', usage: { inputTokens: 100, outputTokens: 10, costUsd: 0.4 } };
    const tasks = Array.from({ length: 5 }, (_, i) => ({
      id: `t${i}`,
      input: 'go',
      agent:
        i === 1
          ? () => {
              throw new Error('sandbox failed to boot');
            }
          : () => createScriptedAgent({ replies: [reply] }),
    }));
    const batch = await runBatch(tasks, {
      concurrency: 1,
      total: { maxCostUsd: 1, strict: false },
      historyDir: dir,
      logger: false,
    });
    const report = await buildHtmlReport(dir, { batch });
    expect(report.runs).toBe(5);
    expect(rows(report.html).map((r) => [r[1], r[2], r[0] >= 0])).toEqual([
      ['t0', 'end_of_turn', true],
      ['t1', 'error', false],
      ['t2', 'end_of_turn', true],
      ['t3', 'end_of_turn', true], // $0.80 spent when it started: its reply passes the cap, as the README allows
      ['t4', 'skipped', false],
    ]);
    expect(rows(report.html)[1]![8]).toContain('sandbox failed to boot');
    expect(report.html).toContain('$1.0000 (');
    expect(report.html).toContain('<strong>Stopped because:</strong>');
  });

  it('buildHtmlReport() of a folder alone lists every task of its manifest, the ones that never wrote a file too', async () => {
    const reply = { text: 'done', usage: { inputTokens: 100, outputTokens: 10, costUsd: 0.1 } };
    const tasks = Array.from({ length: 4 }, (_, i) => ({
      id: `t${i}`,
      input: 'go',
      agent: () => createScriptedAgent({ replies: [reply] }),
    }));
    await runBatch(tasks, { concurrency: 1, historyDir: dir, logger: false });
    // As after a kill: two runs never got to write their files.
    fs.rmSync(path.join(dir, 't1.jsonl'));
    fs.rmSync(path.join(dir, 't3.jsonl'));
    const report = await buildHtmlReport(dir);
    expect(report.runs).toBe(4);
    expect(report.html).toContain('Batch of 4 runs');
    expect(rows(report.html).map((r) => [r[1], r[2], r[8]])).toEqual([
      ['t0', 'end_of_turn', ''],
      ['t1', 'skipped', 'never started: the batch wrote no history file for it (interrupted before it began?)'],
      ['t2', 'end_of_turn', ''],
      ['t3', 'skipped', 'never started: the batch wrote no history file for it (interrupted before it began?)'],
    ]);
  });

  it('buildHtmlReport() of a folder a batch still runs lists a task not started yet as pending, not skipped', async () => {
    const reply = { text: 'done', usage: { inputTokens: 100, outputTokens: 10, costUsd: 0.1 } };
    const tasks = ['t0', 't1'].map((id) => ({
      id,
      input: 'go',
      agent: () => createScriptedAgent({ replies: [reply] }),
    }));
    await runBatch(tasks, { concurrency: 1, historyDir: dir, logger: false });
    fs.rmSync(path.join(dir, 't1.jsonl'));
    const lock = lockFolder(dir, 'test batch');
    try {
      const report = await buildHtmlReport(dir);
      expect(rows(report.html).map((r) => [r[1], r[2], r[8]])).toEqual([
        ['t0', 'end_of_turn', ''],
        ['t1', 'pending', 'not started yet: the batch still runs, and starts it when a slot is free'],
      ]);
    } finally {
      lock.release();
    }
  });

  it('buildHtmlReport() of a folder alone says at the top why the batch stopped early, as its files tell', async () => {
    const reply = { text: 'done', usage: { inputTokens: 100, outputTokens: 10, costUsd: 0.2 } };
    const tasks = Array.from({ length: 5 }, (_, i) => ({
      id: `t${i}`,
      input: 'go',
      agent: () => createScriptedAgent({ replies: [reply] }),
    }));
    await runBatch(tasks, {
      concurrency: 1,
      total: { maxCostUsd: 0.35, strict: false },
      historyDir: dir,
      logger: false,
    });
    const { html } = await buildHtmlReport(dir);
    const line = /<p class="panel failure stopped"><strong>Stopped because:<\/strong> (.*?)<\/p>/.exec(html);
    expect(line?.[1]).toMatch(
      /^3 of 5 tasks never started: the batch&#39;s cap was reached: cost \$0\.40\d* of \$0\.35\d* \(maxCostUsd\)$/,
    );
    // At the top: in the header, before the dashboard.
    expect(html.indexOf('Stopped because:')).toBeLessThan(html.indexOf('</header>'));
    expect(html.indexOf('</header>')).toBeLessThan(html.indexOf('Spend against the caps'));

    const whole = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-sm-build-whole-'));
    try {
      writeBatch(whole, 3);
      expect((await buildHtmlReport(whole)).html).not.toContain('Stopped because');
    } finally {
      fs.rmSync(whole, { recursive: true, force: true });
    }
  });

  it('buildHtmlReport() of a folder heads the page with its failures as the folder reader reads them, linked to their runs', async () => {
    writeBatch(dir, 4);
    fs.writeFileSync(path.join(dir, 'broken.jsonl'), 'not json\n');
    // task-003 killed mid-turn: its file ends after the LLM call.
    const cut = path.join(dir, 'task-003.jsonl');
    fs.writeFileSync(cut, `${fs.readFileSync(cut, 'utf8').split('\n').slice(0, 4).join('\n')}\n`);
    const { html } = await buildHtmlReport(dir);
    const ids = rows(html).map((r) => r[1]);
    const failures = failuresRows(html)!;
    expect(failures.map((r) => r.cells.slice(0, 2))).toEqual([
      ['task-001', 'error'],
      ['task-002', 'cancelled'],
      ['broken', 'unreadable'],
      ['task-003', 'cut_off'],
    ]);
    expect(failures[0]!.cells[2]).toBe('LLM reply malformed');
    expect(failures[3]!.cells[2]).toMatch(/^its file ends inside a turn, in ProcessingLLMResponse \(seq \d+\)$/);
    // Each links to its own row of the runs table (#run-<row> opens its page).
    expect(failures.map((r) => ids[Number(r.href!.replace('#run-', ''))])).toEqual([
      'task-001',
      'task-002',
      path.join(dir, 'broken.jsonl'),
      'task-003',
    ]);
    expect(html.indexOf('<table id="failures">')).toBeLessThan(html.indexOf('<table class="caps">'));
  });

  it('buildHtmlReport() of a folder resumed after a crash marks the run that went on, with what its cut-off attempt spent', async () => {
    const reply = (text: string) => ({ text, usage: { inputTokens: 100, outputTokens: 10, costUsd: 0.1 } });
    const tasks = ['t0', 't1', 't2'].map((id) => ({
      id,
      input: 'go',
      agent: () => createScriptedAgent({ replies: [reply('done')] }),
    }));
    await runBatch(tasks, { historyDir: dir, logger: false });
    // t1 killed after its LLM call: its file ends inside the turn.
    const file = path.join(dir, 't1.jsonl');
    const lines = fs.readFileSync(file, 'utf8').split('\n');
    const upTo = lines.findIndex((l) => l.includes('"to":"ProcessingLLMResponse"'));
    fs.writeFileSync(file, `${lines.slice(0, upTo + 1).join('\n')}\n`);
    expect((await buildHtmlReport(dir)).html).not.toContain('Resumed after a crash');
    await runBatch(tasks, { historyDir: dir, logger: false, resume: true });
    expect(fs.existsSync(`${file}.interrupted`)).toBe(true);

    const { html } = await buildHtmlReport(dir);
    const t1 = rows(html).find((r) => r[1] === 't1')!;
    expect(t1[2]).toBe('end_of_turn');
    expect(t1[8]).toContain('resumed after a crash: 1 cut-off attempt set aside, which spent $0.1000');
    expect(rows(html).filter((r) => r[8].includes('resumed'))).toHaveLength(1);
    expect(html).toContain('<strong>Resumed after a crash:</strong> 1 run went on from 1 cut-off attempt');
    expect(html).toContain('what it spent is counted in the figures above, each call once.');
    // The run went on from its cut-off attempt's spend: $0.1000 once, not twice.
    expect(t1.join(' ')).toContain('$0.1000');
    expect(html).toMatch(/<line class="mark crash" /);
    expect(html).toMatch(/<line class="mark resume" /);
    expect(html).toContain('<p class="all-well">No failures: all 3 runs ended well.</p>');
  });

  it('buildHtmlReport() says what is wrong with the path', async () => {
    await expect(buildHtmlReport(path.join(dir, 'nope.jsonl'))).rejects.toThrow(HistoryFileError);
    await expect(buildHtmlReport(path.join(dir, 'nope.jsonl'))).rejects.toThrow(/nope\.jsonl: no such file or folder/);
    await expect(buildHtmlReport(dir)).rejects.toThrow(/holds no history files \(\*\.jsonl\)/);
    await expect(buildHtmlReport('')).rejects.toThrow(/`path`/);
    const file = writeHostileRun(dir);
    await expect(buildHtmlReport(file, { batch: { runs: [] } as never })).rejects.toThrow(/`options.batch`/);
  });
});
