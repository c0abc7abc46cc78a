import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { extendTable } from '../../lib/machine/extendTable';
import { HistoryFileError } from '../../lib/history/HistoryFileError';
import { toHistoryTableInfo } from '../../lib/history/HistoryTableInfo';
import { JsonlHistorySink } from '../../lib/history/JsonlHistorySink';
import { loadHistory } from '../../lib/history/loadHistory';
import { StateMachine } from '../../lib/machine/StateMachine';
import { DEFAULT_TABLE } from '../../lib/machine/transitions';
import { validateHistory } from '../../lib/history/validateHistory';
import { VERSION } from '../../lib/internal/version';
import { failedRun, scriptedMachine, T0 } from '../fixtures/agentRun';

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-sm-sink-'));
});
afterEach(() => {
  fs.rmSync(dir, { recursive: true, force: true });
});

const lines = (file: string): unknown[] =>
  fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as unknown);

describe('JsonlHistorySink', () => {
  it('.open() writes the meta line first: version, run id, start time, the table', () => {
    const file = path.join(dir, 'run.jsonl');
    const sink = JsonlHistorySink.open(file, { runId: 'task-42', startedAt: T0, metadata: { model: 'm1' } });
    sink.close();
    expect(lines(file)).toEqual([
      {
        type: 'meta',
        version: VERSION,
        runId: 'task-42',
        startedAt: T0,
        table: toHistoryTableInfo(DEFAULT_TABLE),
        metadata: { model: 'm1' },
      },
    ]);
    expect(sink.runId).toBe('task-42');
  });

  it('.open() makes up a run id, and writes no meta line with meta: false', () => {
    const a = JsonlHistorySink.open(path.join(dir, 'a.jsonl'));
    a.close();
    expect(a.runId).toMatch(/^[0-9a-f-]{36}$/);
    const b = JsonlHistorySink.open(path.join(dir, 'b.jsonl'), { meta: false });
    b.close();
    expect(fs.readFileSync(path.join(dir, 'b.jsonl'), 'utf8')).toBe('');
  });

  it('.open() describes an extended table when given one', () => {
    const table = extendTable(DEFAULT_TABLE, {
      states: [{ name: 'Compacting', description: 'c', next: ['SendingToLLM'] }],
      edges: [['ProcessingLLMResponse', 'Compacting']],
    });
    const file = path.join(dir, 'ext.jsonl');
    JsonlHistorySink.open(file, { table }).close();
    expect((lines(file)[0] as { table: { states: string[] } }).table.states).toContain('Compacting');
  });

  it('.open() refuses to replace an existing file unless told to', () => {
    const file = path.join(dir, 'run.jsonl');
    fs.writeFileSync(file, 'earlier run\n');
    expect(() => JsonlHistorySink.open(file)).toThrow(expect.objectContaining({ code: 'file_exists', file }));
    expect(fs.readFileSync(file, 'utf8')).toBe('earlier run\n');
    JsonlHistorySink.open(file, { overwrite: true, meta: false }).close();
    expect(fs.readFileSync(file, 'utf8')).toBe('');
  });

  it('.open() rejects bad arguments by name and reports a path it cannot open', () => {
    expect(() => JsonlHistorySink.open('')).toThrow('Expected `path` to be a non-empty file path, got `` (string)');
    expect(() => JsonlHistorySink.open(path.join(dir, 'x.jsonl'), { runId: '' })).toThrow(/`runId`/);
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(() => JsonlHistorySink.open(path.join(dir, 'y.jsonl'), { metadata: cyclic })).toThrow(
      /`metadata` to be a JSON-serializable value/,
    );
    expect(fs.existsSync(path.join(dir, 'y.jsonl'))).toBe(false);
    expect(() => JsonlHistorySink.open(path.join(dir, 'no', 'such', 'dir.jsonl'))).toThrow(
      expect.objectContaining({ code: 'open_failed' }),
    );
  });

  describe('.attach()', () => {
    const extended = () =>
      extendTable(DEFAULT_TABLE, {
        states: [{ name: 'Compacting', description: 'compact', next: ['SendingToLLM', 'Error'] }],
        edges: [['ProcessingLLMResponse', 'Compacting']],
      });

    it("opened without a table, given to a machine with another: the meta line names the machine's table and the file validates clean", async () => {
      const table = extended();
      const file = path.join(dir, 'custom.jsonl');
      const sink = JsonlHistorySink.open(file, { runId: 'c', startedAt: T0, metadata: { model: 'm1' } });
      let t = T0;
      const machine = new StateMachine({ logger: false, clock: () => ++t, table, sink });
      for (const to of [
        'WaitingForUserInput',
        'SendingToLLM',
        'ProcessingLLMResponse',
        'Compacting',
        'SendingToLLM',
      ] as const)
        machine.transition(to, 'step');
      sink.close();
      expect(lines(file)[0]).toEqual({
        type: 'meta',
        version: VERSION,
        runId: 'c',
        startedAt: T0,
        table: toHistoryTableInfo(table),
        metadata: { model: 'm1' },
      });
      expect(sink.linesWritten).toBe(6);
      const loaded = await loadHistory(file);
      expect(loaded.records).toHaveLength(5);
      // Valid moves, and the file says honestly that its run stopped mid-turn.
      expect(validateHistory(loaded.entries)).toEqual({
        ok: true,
        records: 5,
        issues: [],
        interrupted: {
          seq: 5,
          lastState: 'SendingToLLM',
          message: 'ended without a terminal move (interrupted?): its last move is Compacting → SendingToLLM (seq 5)',
        },
      });
    });

    it('with the table the meta line already names (in any order) leaves the file as it is', () => {
      const file = path.join(dir, 'same.jsonl');
      const sink = JsonlHistorySink.open(file, { startedAt: T0 });
      const before = fs.readFileSync(file, 'utf8');
      new StateMachine({ logger: false, sink });
      const info = toHistoryTableInfo(DEFAULT_TABLE);
      sink.attach({
        ...DEFAULT_TABLE,
        states: Object.fromEntries(Object.entries(DEFAULT_TABLE.states).reverse()) as typeof DEFAULT_TABLE.states,
      });
      sink.close();
      expect(fs.readFileSync(file, 'utf8')).toBe(before);
      expect((lines(file)[0] as { table: unknown }).table).toEqual(info);
    });

    it('refuses a machine whose table differs from the one given to .open(), naming both', () => {
      const file = path.join(dir, 'given.jsonl');
      const sink = JsonlHistorySink.open(file, { table: DEFAULT_TABLE, startedAt: T0 });
      expect(() => new StateMachine({ logger: false, table: extended(), sink })).toThrow(
        expect.objectContaining({
          name: 'HistoryFileError',
          code: 'table_mismatch',
          file,
          message: `${file}: the sink was opened for the sixteen-state table but attached to a machine with a table of 17 states (initial Ready) that adds Compacting; pass that machine's table as \`{ table }\` to JsonlHistorySink.open`,
        }),
      );
      sink.close();
      expect(lines(file)).toHaveLength(1);
    });

    it('refuses a machine with another table once lines were written for the first one', () => {
      const file = path.join(dir, 'shared.jsonl');
      const sink = JsonlHistorySink.open(file, { startedAt: T0 });
      new StateMachine({ logger: false, clock: () => T0, sink }).transition('WaitingForUserInput', 'start');
      expect(() => new StateMachine({ logger: false, table: extended(), sink })).toThrow(
        expect.objectContaining({
          code: 'table_mismatch',
          message: expect.stringMatching(
            /1 line was already written for it; pass the machine's table as `\{ table \}` to JsonlHistorySink\.open$/,
          ),
        }),
      );
      sink.close();
      expect(lines(file)).toHaveLength(2);
    });

    it('with meta: false has no meta line to keep in step, and writes nothing', () => {
      const file = path.join(dir, 'bare.jsonl');
      const sink = JsonlHistorySink.open(file, { meta: false, table: DEFAULT_TABLE });
      new StateMachine({ logger: false, table: extended(), sink });
      sink.close();
      expect(fs.readFileSync(file, 'utf8')).toBe('');
    });
  });

  it('.write() appends one whole line per record, exactly the record fields', () => {
    const file = path.join(dir, 'run.jsonl');
    const sink = JsonlHistorySink.open(file, { meta: false });
    const machine = failedRun(sink);
    sink.close();
    const written = lines(file);
    expect(written).toHaveLength(15);
    expect(written).toEqual(machine.history());
    expect(Object.keys(written[14] as object)).toEqual([
      'seq',
      'from',
      'to',
      'description',
      'at',
      'durationMs',
      'forced',
      'data',
    ]);
    expect(sink.linesWritten).toBe(15);
  });

  it('.rejected() and .reset() append lines marked with a type, in order with the records', () => {
    const file = path.join(dir, 'run.jsonl');
    const sink = JsonlHistorySink.open(file, { meta: false });
    const run = scriptedMachine(sink);
    run.play([['WaitingForUserInput', 'start', 5]]);
    expect(() => run.machine.transition('RunningTool', 'skip ahead')).toThrow();
    run.machine.reset();
    sink.close();
    expect(lines(file)).toEqual([
      {
        seq: 1,
        from: 'Ready',
        to: 'WaitingForUserInput',
        description: 'start',
        at: T0 + 5,
        durationMs: 5,
        forced: false,
      },
      {
        type: 'rejected',
        from: 'WaitingForUserInput',
        to: 'RunningTool',
        allowed: ['SendingToLLM', 'Error'],
        description: 'skip ahead',
        at: T0 + 5,
        seq: 1,
      },
      { type: 'reset', from: 'WaitingForUserInput', at: T0 + 5, seq: 1 },
    ]);
  });

  it('.write() after .close() throws sink_closed, and the machine reports it as a sinkError', () => {
    const file = path.join(dir, 'run.jsonl');
    const sink = JsonlHistorySink.open(file);
    sink.close();
    sink.close(); // a second close does nothing
    expect(sink.isOpen).toBe(false);
    const machine = new StateMachine({ logger: false, sink });
    const errors: unknown[] = [];
    machine.on('sinkError', ({ error }) => errors.push(error));
    machine.transition('WaitingForUserInput', 'start');
    expect(machine.current).toBe('WaitingForUserInput');
    expect(errors).toEqual([expect.objectContaining({ code: 'sink_closed', file })]);
    expect((errors[0] as Error).message).toMatch(/closed/);
  });

  it('.write() reports a failed write (disk full) instead of swallowing it', () => {
    if (!fs.existsSync('/dev/full')) throw new Error('this test needs /dev/full (Linux)');
    const sink = JsonlHistorySink.open('/dev/full', { overwrite: true, meta: false });
    try {
      const record = {
        seq: 1,
        from: 'Ready',
        to: 'WaitingForUserInput',
        description: '',
        at: 1,
        durationMs: 0,
        forced: false,
      } as const;
      expect(() => sink.write(record)).toThrow(HistoryFileError);
      expect(() => sink.write(record)).toThrow(
        expect.objectContaining({
          code: 'write_failed',
          message: expect.stringMatching(/^\/dev\/full: cannot write line 1: .*ENOSPC/),
        }),
      );
    } finally {
      sink.close();
    }
  });

  it('.write() keeps the chain whole when data cannot be JSON, and reports it', () => {
    const file = path.join(dir, 'run.jsonl');
    const sink = JsonlHistorySink.open(file, { meta: false });
    const cyclic: Record<string, unknown> = { name: 'loop' };
    cyclic.self = cyclic;
    const record = {
      seq: 1,
      from: 'Ready',
      to: 'WaitingForUserInput',
      description: 'start',
      at: 1,
      durationMs: 0,
      forced: false,
      data: cyclic,
    } as const;
    expect(() => sink.write(record)).toThrow(
      expect.objectContaining({
        code: 'unserializable_data',
        message: expect.stringMatching(/record 1 cannot be written as JSON/),
      }),
    );
    sink.close();
    const [line] = lines(file) as Array<{ seq: number; data: { unserializable: string } }>;
    expect(line?.seq).toBe(1);
    expect(line?.data.unserializable).toMatch(/circular/i);
  });

  it('.write() loses at most the line being written when the process is killed (SIGKILL) mid-run', async () => {
    const file = path.join(dir, 'killed.jsonl');
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', path.join(__dirname, '..', 'fixtures', 'killedRun.ts'), file, '500'],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const exited = new Promise<NodeJS.Signals | null>((resolve) =>
      child.on('exit', (_code, signal) => resolve(signal)),
    );
    await new Promise<void>((resolve, reject) => {
      child.stdout.on('data', (chunk: Buffer) => {
        if (chunk.toString().includes('ready')) resolve();
      });
      child.on('exit', (code) => reject(new Error(`child exited (${code}) before it was ready: ${stderr}`)));
    });
    child.kill('SIGKILL');
    expect(await exited).toBe('SIGKILL');

    const history = await loadHistory(file);
    expect(history.meta?.runId).toBe('killed-run');
    expect(history.records.length).toBeGreaterThanOrEqual(500);
    expect(history.records.map((r) => r.seq)).toEqual(history.records.map((_, i) => i + 1));
    // Every line that reached the file is valid, and the file says the run was cut off — unless
    // the kill happened to land right after a turn ended (EndOfTurn is one move in twelve).
    const last = history.records.at(-1)!;
    const cutOff = {
      interrupted: {
        seq: last.seq,
        lastState: last.to,
        message: `ended without a terminal move (interrupted?): its last move is ${last.from} → ${last.to} (seq ${last.seq})`,
      },
    };
    expect(validateHistory(history.entries)).toEqual({
      ok: true,
      records: history.records.length,
      issues: [],
      ...(last.to === 'EndOfTurn' ? {} : cutOff),
    });
    // Every complete line loaded; a cut one can only be the very last.
    const text = fs.readFileSync(file, 'utf8');
    const completeLines = text.split('\n').length - 1;
    expect(history.entries).toHaveLength(completeLines);
    expect(history.warnings.length).toBeLessThanOrEqual(1);
    if (history.warnings.length === 1) {
      expect(text.endsWith('\n')).toBe(false);
      expect(history.warnings[0]).toMatchObject({ code: 'cut_last_line', line: completeLines + 1 });
    } else {
      expect(text.endsWith('\n')).toBe(true);
    }
  }, 30_000);
});
