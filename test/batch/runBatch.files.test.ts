import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import {
  createScriptedAgent,
  InvalidArgumentError,
  runBatch,
  type BatchOptions,
  type BatchTask,
} from '../../lib/index';
import { HistoryFileError, loadHistory } from '../../lib/subpaths/history';
import { safeFileName } from '../../lib/batch/keeping/safeFileName';
import { JsonlHistorySink } from '../../lib/history/JsonlHistorySink';
import { manualClock } from '../helpers/manualClock';

const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
const base = (): BatchOptions => ({ logger: false, sleep: () => tick(), clock: manualClock().now });
const task = (id: string): BatchTask => ({
  id,
  input: 'go',
  agent: () =>
    createScriptedAgent({
      sleep: () => tick(),
      replies: [{ text: 'done', usage: { costUsd: 0.01, inputTokens: 1, outputTokens: 1 } }],
    }),
});

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-sm-batchfiles-'));
});
afterEach(() => {
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('runBatch() history files', () => {
  it('never writes through a symlink planted at a history path', async () => {
    const victim = path.join(dir, 'victim.txt');
    fs.writeFileSync(victim, 'precious');
    const historyDir = path.join(dir, 'runs');
    fs.mkdirSync(historyDir);
    fs.symlinkSync(victim, path.join(historyDir, 'a.jsonl'));
    // Refused before anything runs: the link is a clash.
    await expect(runBatch([task('a')], { ...base(), historyDir })).rejects.toThrow(
      expect.objectContaining({ code: 'file_exists', message: expect.stringContaining('a.jsonl') }),
    );
    // Told to overwrite, the batch sets the link aside (moved, never followed) and writes a file of its own.
    const report = await runBatch([task('a')], { ...base(), historyDir, overwriteHistory: true });
    expect(fs.readFileSync(victim, 'utf8')).toBe('precious');
    expect(report.runs[0]).toMatchObject({ outcome: 'end_of_turn' });
    expect(fs.readlinkSync(path.join(historyDir, 'a.jsonl.overwritten'))).toBe(victim);
    expect(fs.lstatSync(path.join(historyDir, 'a.jsonl')).isFile()).toBe(true);
    // A link planted at the path later (after the batch set its files aside) is not followed either.
    const late = path.join(historyDir, 'late.jsonl');
    fs.symlinkSync(victim, late);
    expect(() => JsonlHistorySink.open(late, { overwrite: true })).toThrow(
      /is a symbolic link; a history file is never written through one/,
    );
    expect(fs.readFileSync(victim, 'utf8')).toBe('precious');
  });

  it('refuses a second batch into the same directory, naming every clash, unless overwriteHistory', async () => {
    const historyDir = path.join(dir, 'runs');
    await runBatch([task('a'), task('b'), task('c')], { ...base(), historyDir });
    const before = fs.readFileSync(path.join(historyDir, 'a.jsonl'), 'utf8');
    let started = 0;
    const counting = (id: string): BatchTask => ({
      id,
      input: 'go',
      agent: () => {
        started++;
        return createScriptedAgent({ sleep: () => tick(), replies: [{ text: 'done' }] });
      },
    });
    await expect(runBatch([counting('a'), counting('b'), counting('new')], { ...base(), historyDir })).rejects.toThrow(
      /already holds 2 history files this batch would write \(a\.jsonl, b\.jsonl\)/,
    );
    expect(started).toBe(0);
    expect(fs.readFileSync(path.join(historyDir, 'a.jsonl'), 'utf8')).toBe(before);
    const again = await runBatch([task('a')], { ...base(), historyDir, overwriteHistory: true });
    expect((await loadHistory(again.runs[0]!.historyFile!)).records.length).toBeGreaterThan(0);
    await expect(runBatch([task('z')], { ...base(), historyDir, overwriteHistory: 'yes' as never })).rejects.toThrow(
      InvalidArgumentError,
    );
  });

  it('never names a file with a leading dash', async () => {
    expect(safeFileName('-rf')).toMatch(/^_rf-[0-9a-f]{8}$/);
    expect(safeFileName('--help')).toMatch(/^_-help-[0-9a-f]{8}$/);
    const historyDir = path.join(dir, 'runs');
    const report = await runBatch([task('-rf')], { ...base(), historyDir });
    expect(path.basename(report.runs[0]!.historyFile!)).toMatch(/^_rf-/);
  });

  it('survives an abort reason whose message cannot be read', async () => {
    const hostile = new Proxy(Object.create(null) as object, {
      get: () => {
        throw new Error('no reading me');
      },
    });
    const controller = new AbortController();
    controller.abort(hostile);
    const report = await runBatch([task('a'), task('b')], { ...base(), signal: controller.signal });
    expect(report.runs.map((r) => r.outcome)).toEqual(['skipped', 'skipped']);
    expect(report.stopped?.message).toMatch(/^batch aborted/);
  });
});

describe('JsonlHistorySink.open()', () => {
  it('refuses to write through a symbolic link, even with overwrite: true', () => {
    const victim = path.join(dir, 'victim.txt');
    fs.writeFileSync(victim, 'precious');
    const link = path.join(dir, 'run.jsonl');
    fs.symlinkSync(victim, link);
    expect(() => JsonlHistorySink.open(link, { overwrite: true })).toThrow(HistoryFileError);
    expect(() => JsonlHistorySink.open(link, { overwrite: true })).toThrow(/is a symbolic link/);
    expect(fs.readFileSync(victim, 'utf8')).toBe('precious');
  });
});
