import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { HistoryEntry, HistoryWarning } from '../../lib/history/HistoryEntry';
import { HistoryFileError } from '../../lib/history/HistoryFileError';
import { JsonlHistorySink } from '../../lib/history/JsonlHistorySink';
import { loadHistory, readHistory } from '../../lib/history/loadHistory';
import { failedRun, scriptedMachine, T0 } from '../fixtures/agentRun';

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-sm-load-'));
});
afterEach(() => {
  fs.rmSync(dir, { recursive: true, force: true });
});

/** A history file written by the sink during a scripted failed run. */
function writeRun(name: string, options: { meta?: boolean } = {}): string {
  const file = path.join(dir, name);
  const sink = JsonlHistorySink.open(file, { runId: 'r1', startedAt: T0, ...options });
  failedRun(sink);
  sink.close();
  return file;
}

const record = (seq: number): string =>
  JSON.stringify({
    seq,
    from: 'Ready',
    to: 'WaitingForUserInput',
    description: `r${seq}`,
    at: seq,
    durationMs: 0,
    forced: false,
  });

async function failure(promise: Promise<unknown>): Promise<HistoryFileError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof HistoryFileError) return error;
    throw error;
  }
  throw new Error('expected a HistoryFileError');
}

describe('loadHistory()', () => {
  it('loads a file with a meta line: meta, table, records, rejected moves, resets, entries with line numbers', async () => {
    const file = path.join(dir, 'run.jsonl');
    const sink = JsonlHistorySink.open(file, { runId: 'r1', startedAt: T0 });
    const run = scriptedMachine(sink);
    run.play([['WaitingForUserInput', 'start', 5]]);
    expect(() => run.machine.transition('EndOfTurn', 'too soon')).toThrow();
    run.machine.reset();
    run.play([['WaitingForUserInput', 'again', 5]]);
    sink.close();

    const history = await loadHistory(file);
    expect(history.file).toBe(file);
    expect(history.meta).toMatchObject({ type: 'meta', runId: 'r1', startedAt: T0 });
    expect(history.table?.initial).toBe('Ready');
    expect(history.records.map((r) => r.seq)).toEqual([1, 2]);
    expect(history.rejected).toEqual([
      expect.objectContaining({ from: 'WaitingForUserInput', to: 'EndOfTurn', seq: 1 }),
    ]);
    expect(history.resets).toEqual([{ type: 'reset', from: 'WaitingForUserInput', at: T0 + 5, seq: 1 }]);
    expect(history.entries.map((e) => [e.kind, e.line])).toEqual([
      ['meta', 1],
      ['record', 2],
      ['rejected', 3],
      ['reset', 4],
      ['record', 5],
    ]);
    expect(history.warnings).toEqual([]);
  });

  it('loads a file without a meta line, records equal to what the machine kept', async () => {
    const file = path.join(dir, 'plain.jsonl');
    const sink = JsonlHistorySink.open(file, { meta: false });
    const machine = failedRun(sink);
    sink.close();
    const history = await loadHistory(file);
    expect(history.meta).toBeUndefined();
    expect(history.table).toBeUndefined();
    expect(history.records).toEqual(machine.history());
  });

  it('tolerates a cut last line with a warning naming the file and line', async () => {
    const file = writeRun('cut.jsonl');
    const text = fs.readFileSync(file, 'utf8');
    fs.writeFileSync(file, text.slice(0, text.length - 25)); // the last record, cut mid-way, no newline
    const history = await loadHistory(file);
    expect(history.records).toHaveLength(14);
    expect(history.warnings).toEqual([
      {
        code: 'cut_last_line',
        file,
        line: 16,
        message: `${file}:16: the last line is incomplete (the run was probably killed while writing it) and was skipped`,
      },
    ]);
  });

  it('rejects a corrupt line in the middle, naming the file, the line and its text', async () => {
    const file = writeRun('corrupt.jsonl');
    const text = fs.readFileSync(file, 'utf8').split('\n');
    text[5] = '{"seq":5,"from":"Ready" GARBAGE';
    fs.writeFileSync(file, text.join('\n'));
    const error = await failure(loadHistory(file));
    expect(error.code).toBe('corrupt_line');
    expect(error.file).toBe(file);
    expect(error.line).toBe(6);
    expect(error.message).toMatch(
      new RegExp(
        `^${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:6: corrupt line: not JSON .* — "\\{\\\\"seq\\\\":5,\\\\"from\\\\":\\\\"Ready\\\\" GARBAGE"$`,
      ),
    );
  });

  it('rejects a well-formed line with a bad field, by field name', async () => {
    const file = path.join(dir, 'field.jsonl');
    fs.writeFileSync(file, `${record(1)}\n${record(2).replace('"durationMs":0', '"durationMs":"0"')}\n${record(3)}\n`);
    const error = await failure(loadHistory(file));
    expect(error.message).toMatch(/:2: corrupt line: field "durationMs" must be a finite number, got `0` \(string\)/);
  });

  it('rejects a bad last line that ends with a newline: a crash cannot write that', async () => {
    const file = path.join(dir, 'badlast.jsonl');
    fs.writeFileSync(file, `${record(1)}\nnot json at all\n\n`);
    const error = await failure(loadHistory(file));
    expect(error).toMatchObject({ code: 'corrupt_line', line: 2 });
  });

  it('rejects a meta line anywhere but first', async () => {
    const a = writeRun('a.jsonl');
    const b = path.join(dir, 'twice.jsonl');
    fs.writeFileSync(b, fs.readFileSync(a, 'utf8') + fs.readFileSync(a, 'utf8'));
    const error = await failure(loadHistory(b));
    expect(error).toMatchObject({ code: 'corrupt_line', line: 17 });
    expect(error.message).toMatch(/meta line is only allowed as the first line/);
  });

  it('skips blank lines and accepts CRLF line ends and a byte order mark', async () => {
    const file = path.join(dir, 'crlf.jsonl');
    fs.writeFileSync(file, `\ufeff${record(1)}\r\n\r\n${record(2)}\r\n`);
    const history = await loadHistory(file);
    expect(history.entries.map((e) => e.line)).toEqual([1, 3]);
  });

  it('reports a missing file as not_found and a directory as read_failed', async () => {
    const missing = path.join(dir, 'missing.jsonl');
    expect(await failure(loadHistory(missing))).toMatchObject({
      code: 'not_found',
      message: `${missing}: no such file`,
    });
    expect(await failure(loadHistory(dir))).toMatchObject({
      code: 'read_failed',
      message: `${dir}: is a directory, not a history file`,
    });
  });

  it('names a path that is not one', async () => {
    await expect(loadHistory(42 as never)).rejects.toMatchObject({
      code: 'invalid_argument',
      message: 'Expected `path` to be a history file path, got `42` (number)',
    });
  });

  it('loads an empty file as an empty history', async () => {
    const file = path.join(dir, 'empty.jsonl');
    fs.writeFileSync(file, '');
    expect(await loadHistory(file)).toMatchObject({ entries: [], records: [], warnings: [] });
  });
});

describe('readHistory()', () => {
  it('yields entries one at a time and passes warnings to onWarning', async () => {
    const file = path.join(dir, 'stream.jsonl');
    fs.writeFileSync(file, `${record(1)}\n${record(2)}\n{"seq":3,"fr`);
    const seen: HistoryEntry[] = [];
    const warnings: HistoryWarning[] = [];
    for await (const entry of readHistory(file, { onWarning: (w) => warnings.push(w) })) seen.push(entry);
    expect(seen.map((e) => e.kind === 'record' && e.record.seq)).toEqual([1, 2]);
    expect(warnings).toEqual([expect.objectContaining({ code: 'cut_last_line', line: 3 })]);
  });

  it('emits a process warning for a cut line when no onWarning is given', async () => {
    const file = path.join(dir, 'stream.jsonl');
    fs.writeFileSync(file, `${record(1)}\n{"seq":2`);
    const emitted: string[] = [];
    const original = process.emitWarning;
    process.emitWarning = ((warning: string | Error) =>
      void emitted.push(String(warning))) as typeof process.emitWarning;
    try {
      for await (const entry of readHistory(file)) expect(entry.kind).toBe('record');
    } finally {
      process.emitWarning = original;
    }
    expect(emitted).toEqual([expect.stringMatching(/:2: the last line is incomplete/)]);
  });

  it('stops reading when the consumer stops early', async () => {
    const file = path.join(dir, 'many.jsonl');
    fs.writeFileSync(file, Array.from({ length: 1000 }, (_, i) => record(i + 1)).join('\n'));
    let count = 0;
    for await (const entry of readHistory(file)) {
      expect(entry.line).toBe(++count);
      if (count === 3) break;
    }
    expect(count).toBe(3);
  });

  it('closes the file when the consumer stops early, with the next read under way', async () => {
    const file = path.join(dir, 'long.jsonl');
    // Over two of the reader's 1 MiB chunks.
    fs.writeFileSync(file, `${Array.from({ length: 40_000 }, (_, i) => record(i + 1)).join('\n')}\n`);
    // The descriptors open on this file (not all of the process's: others open and close meanwhile).
    const openOnFile = (): number =>
      fs.readdirSync('/proc/self/fd').filter((fd) => {
        try {
          return fs.readlinkSync(`/proc/self/fd/${fd}`) === file;
        } catch {
          return false; // closed since it was listed
        }
      }).length;
    const linux = fs.existsSync('/proc/self/fd');
    let count = 0;
    for await (const entry of readHistory(file)) {
      if (++count === 10_000 && linux) expect(openOnFile()).toBe(1);
      if (count === 20_000) {
        expect(entry.line).toBe(20_000);
        break;
      }
    }
    expect(count).toBe(20_000);
    if (linux) expect(openOnFile()).toBe(0);
    expect((await loadHistory(file)).records).toHaveLength(40_000);
  });
});
