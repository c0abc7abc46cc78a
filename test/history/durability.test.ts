import * as fs from 'node:fs';
// The module object itself (not the namespace copy), so a spy replaces what the sink calls.
import nodeFs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { spawn } from 'node:child_process';
import { HistoryFileError } from '../../lib/history/HistoryFileError';
import { JsonlHistorySink } from '../../lib/history/JsonlHistorySink';
import { loadHistory, readHistory } from '../../lib/history/loadHistory';
import { validateHistory } from '../../lib/history/validateHistory';
import { InvalidArgumentError } from '../../lib/machine/InvalidArgumentError';
import { StateMachine } from '../../lib/machine/StateMachine';

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-sm-durable-'));
});
afterEach(() => {
  jest.restoreAllMocks();
  fs.rmSync(dir, { recursive: true, force: true });
});

const enospc = (): NodeJS.ErrnoException =>
  Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });

/** Writes half of what the sink asked for (a string, or a Buffer's range), as a filling disk does. */
function halfWrite(real: typeof fs.writeSync, fd: number, data: Buffer | string, offset = 0, length?: number): number {
  const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
  return real(fd, bytes, offset, Math.floor((length ?? bytes.length - offset) / 2));
}

/** A turn: Ready → WaitingForUserInput → SendingToLLM → ProcessingLLMResponse → EndOfTurn. */
function turn(machine: StateMachine): void {
  machine.transition('WaitingForUserInput', 'user');
  machine.transition('SendingToLLM', 'send');
  machine.transition('ProcessingLLMResponse', 'reply');
  machine.transition('EndOfTurn', 'done');
}

describe('JsonlHistorySink on a full disk', () => {
  it('.write() rolls a short write back to the last complete line, so the file stays readable', async () => {
    const file = path.join(dir, 'run.jsonl');
    const sink = JsonlHistorySink.open(file, { runId: 'r' });
    const errors: unknown[] = [];
    const machine = new StateMachine({ logger: false, sink });
    machine.on('sinkError', ({ error }) => errors.push(error));
    machine.transition('WaitingForUserInput', 'user');
    // The disk fills: the next write stores half the line and then fails.
    const real = fs.writeSync;
    let calls = 0;
    const spy = jest.spyOn(nodeFs, 'writeSync').mockImplementation(((
      fd: number,
      data: Buffer | string,
      offset?: number,
      length?: number,
    ) => {
      calls++;
      if (calls === 1) return halfWrite(real, fd, data, offset, length);
      throw enospc();
    }) as typeof fs.writeSync);
    machine.transition('SendingToLLM', 'send (lost)');
    spy.mockRestore();
    // Space returns.
    machine.transition('ProcessingLLMResponse', 'reply');
    machine.transition('EndOfTurn', 'done');
    sink.close();
    expect(errors).toEqual([expect.objectContaining({ code: 'write_failed' })]);
    const loaded = await loadHistory(file);
    expect(loaded.records.map((r) => r.description)).toEqual(['user', 'reply', 'done']);
    // The lost line shows as a gap in seq, which validate reports: nothing else is lost.
    expect(validateHistory(loaded.entries).issues.map((i) => i.code)).toContain('seq_gap');
  });

  it('.write() finishes a short write of a line whose size in bytes is more than its length (non-ASCII text)', async () => {
    const file = path.join(dir, 'run.jsonl');
    const sink = JsonlHistorySink.open(file, { runId: 'r' });
    const machine = new StateMachine({ logger: false, sink });
    machine.transition('WaitingForUserInput', 'user');
    machine.transition('SendingToLLM', 'envoyé → modèle');
    // Each write stores part of what it was given: a string, exactly as many bytes as it has
    // UTF-16 units (short, since é and → take more than one byte each); bytes, half of them.
    // The sink must see that and write the rest, also for a description it has written before.
    const real = fs.writeSync;
    let calls = 0;
    let halved = false;
    const spy = jest.spyOn(nodeFs, 'writeSync').mockImplementation(((
      fd: number,
      data: Buffer | string,
      offset?: number,
      length?: number,
    ) => {
      calls++;
      if (typeof data === 'string') return real(fd, Buffer.from(data, 'utf8'), 0, data.length);
      // Bytes: half of them at a line's first call, the rest at its second.
      halved = !halved;
      return real(fd, data, offset, halved ? Math.ceil(length! / 2) : length);
    }) as typeof fs.writeSync);
    machine.transition('ProcessingLLMResponse', 'envoyé → modèle');
    machine.transition('EndOfTurn', 'réponse');
    spy.mockRestore();
    sink.close();
    expect(calls).toBe(4);
    const loaded = await loadHistory(file);
    expect(loaded.records.map((r) => r.description)).toEqual(['user', 'envoyé → modèle', 'envoyé → modèle', 'réponse']);
  });

  it('.write() starts the next line on a new line when the half line cannot be cut back', async () => {
    const file = path.join(dir, 'run.jsonl');
    const sink = JsonlHistorySink.open(file, { runId: 'r' });
    const machine = new StateMachine({ logger: false, sink });
    machine.on('sinkError', () => undefined);
    machine.transition('WaitingForUserInput', 'user');
    const real = fs.writeSync;
    let calls = 0;
    jest.spyOn(nodeFs, 'writeSync').mockImplementation(((
      fd: number,
      data: Buffer | string,
      offset?: number,
      length?: number,
    ) => {
      calls++;
      if (calls === 1) return halfWrite(real, fd, data, offset, length);
      throw enospc();
    }) as typeof fs.writeSync);
    jest.spyOn(nodeFs, 'ftruncateSync').mockImplementation(() => {
      throw enospc();
    });
    machine.transition('SendingToLLM', 'send (lost)');
    jest.restoreAllMocks();
    machine.transition('ProcessingLLMResponse', 'reply');
    sink.close();
    const text = fs.readFileSync(file, 'utf8').split('\n');
    expect(text).toHaveLength(5); // meta, user, half line, reply, ''
    await expect(loadHistory(file)).rejects.toThrow(/:3: corrupt line: .*--salvage/);
    const salvaged = await loadHistory(file, { salvage: true });
    expect(salvaged.records.map((r) => r.description)).toEqual(['user', 'reply']);
    expect(salvaged.skippedLines).toEqual([3]);
  });
});

describe('JsonlHistorySink durability', () => {
  it.each([
    ['none', 0],
    ['turn', 1], // the terminal move; close() has nothing left to force
    ['move', 5], // meta, four moves
  ] as const)('.open({ durability: %s }) forces lines to the disk %i times for one turn', (durability, syncs) => {
    const file = path.join(dir, `${durability}.jsonl`);
    const spy = jest.spyOn(nodeFs, 'fsyncSync');
    const sink = JsonlHistorySink.open(file, { durability });
    turn(new StateMachine({ logger: false, sink }));
    sink.close();
    expect(spy).toHaveBeenCalledTimes(syncs);
  });

  it("close() forces what a turn in progress wrote, under 'turn'", () => {
    const file = path.join(dir, 'turn-open.jsonl');
    const spy = jest.spyOn(nodeFs, 'fsyncSync');
    const sink = JsonlHistorySink.open(file, { durability: 'turn' });
    const machine = new StateMachine({ logger: false, sink });
    machine.transition('WaitingForUserInput', 'ready');
    machine.transition('SendingToLLM', 'send');
    expect(spy).toHaveBeenCalledTimes(0);
    sink.close();
    expect(spy).toHaveBeenCalledTimes(1);
  });

  it('.open() rejects an unknown durability and a table that is not one, by name', () => {
    expect(() => JsonlHistorySink.open(path.join(dir, 'a.jsonl'), { durability: 'always' as never })).toThrow(
      InvalidArgumentError,
    );
    expect(() => JsonlHistorySink.open(path.join(dir, 'a.jsonl'), { durability: 'always' as never })).toThrow(
      /durability/,
    );
    expect(() => JsonlHistorySink.open(path.join(dir, 'b.jsonl'), { table: 5 as never })).toThrow(
      /Expected `table` to be a sound transition table/,
    );
    expect(fs.readdirSync(dir)).toEqual([]);
  });
});

describe('readHistory on damaged files', () => {
  const good = (seq: number, to = 'WaitingForUserInput', from = 'Ready'): string =>
    JSON.stringify({ seq, from, to, description: `r${seq}`, at: seq, durationMs: 0, forced: false });

  it('loadHistory() names a glued middle line and says --salvage exists; salvage reads the rest', async () => {
    const file = path.join(dir, 'glued.jsonl');
    fs.writeFileSync(file, `${good(1)}\n${good(2).slice(0, 20)}${good(3)}\n${good(4)}\n`);
    await expect(loadHistory(file)).rejects.toThrow(
      expect.objectContaining({ code: 'corrupt_line', line: 2, message: expect.stringMatching(/--salvage/) }),
    );
    const loaded = await loadHistory(file, { salvage: true });
    expect(loaded.records.map((r) => r.seq)).toEqual([1, 4]);
    expect(loaded.skippedLines).toEqual([2]);
    expect(loaded.warnings[0]).toMatchObject({ code: 'skipped_line', line: 2 });
  });

  it('loadHistory({ salvage: true }) skips a hole of NUL bytes left by a power cut', async () => {
    const file = path.join(dir, 'hole.jsonl');
    fs.writeFileSync(
      file,
      Buffer.concat([Buffer.from(`${good(1)}\n`), Buffer.alloc(4096), Buffer.from(`\n${good(3)}\n`)]),
    );
    await expect(loadHistory(file)).rejects.toThrow(HistoryFileError);
    const loaded = await loadHistory(file, { salvage: true });
    expect(loaded.records.map((r) => r.seq)).toEqual([1, 3]);
    expect(loaded.skippedLines).toEqual([2]);
  });

  it('readHistory() refuses a line over maxLineBytes, naming the line and its size, without holding it', async () => {
    const file = path.join(dir, 'long.jsonl');
    fs.writeFileSync(file, `${good(1)}\n${'x'.repeat(5000)}\n${good(2)}\n`);
    await expect(loadHistory(file, { maxLineBytes: 1000 })).rejects.toThrow(
      expect.objectContaining({
        code: 'line_too_long',
        line: 2,
        message: expect.stringMatching(/longer than the limit of 1,000 bytes/),
      }),
    );
    const loaded = await loadHistory(file, { maxLineBytes: 1000, salvage: true });
    expect(loaded.records.map((r) => r.seq)).toEqual([1, 2]);
    expect(loaded.warnings[0]?.message).toMatch(/:2: .*5,000 bytes long, over the limit of 1,000/);
  });

  it('readHistory() of /dev/zero stops at the line limit with a HistoryFileError instead of killing the process', async () => {
    if (!fs.existsSync('/dev/zero')) throw new Error('this test needs /dev/zero (Linux)');
    const read = async (): Promise<void> => {
      for await (const entry of readHistory('/dev/zero', { maxLineBytes: 8 * 1024 * 1024 })) void entry;
    };
    await expect(read()).rejects.toThrow(expect.objectContaining({ code: 'line_too_long', line: 1 }));
  });

  it('readHistory() rejects a bad maxLineBytes by name', async () => {
    await expect(loadHistory('x', { maxLineBytes: -1 })).rejects.toThrow(/Expected `maxLineBytes`/);
  });

  it('readHistory({ input }) reads a stream, naming it as given', async () => {
    async function* input(): AsyncGenerator<Uint8Array> {
      yield Buffer.from(`${good(1)}\n${good(2).slice(0, 10)}`);
      yield Buffer.from(`${good(2).slice(10)}\n`);
    }
    const seqs: number[] = [];
    for await (const entry of readHistory('-', { input: input() }))
      if (entry.kind === 'record') seqs.push(entry.record.seq);
    expect(seqs).toEqual([1, 2]);
  });
});

describe('JsonlHistorySink group commit', () => {
  const lineCount = (file: string): number => fs.readFileSync(file, 'utf8').split('\n').length - 1;

  it('.open({ groupCommit }) keeps lines in memory and writes them in one write when a turn ends', async () => {
    const file = path.join(dir, 'group.jsonl');
    const sink = JsonlHistorySink.open(file, { runId: 'r', groupCommit: true });
    const writes = jest.spyOn(nodeFs, 'writeSync');
    const machine = new StateMachine({ logger: false, sink });
    machine.transition('WaitingForUserInput', 'user');
    machine.transition('SendingToLLM', 'send');
    machine.transition('ProcessingLLMResponse', 'reply');
    expect(lineCount(file)).toBe(1); // the meta line, written at once
    expect(sink.pendingLines).toBe(3);
    machine.transition('EndOfTurn', 'done'); // terminal: the turn ended
    expect(writes).toHaveBeenCalledTimes(1);
    expect(sink.pendingLines).toBe(0);
    expect(lineCount(file)).toBe(5);
    expect(sink.linesWritten).toBe(5);
    sink.close();
    expect((await loadHistory(file)).records.map((r) => r.description)).toEqual(['user', 'send', 'reply', 'done']);
  });

  it('.close() and .flush() write the waiting lines', async () => {
    const file = path.join(dir, 'close.jsonl');
    const sink = JsonlHistorySink.open(file, { runId: 'r', groupCommit: { maxLines: 100 } });
    const machine = new StateMachine({ logger: false, sink });
    machine.transition('WaitingForUserInput', 'user');
    sink.flush();
    expect(lineCount(file)).toBe(2);
    machine.transition('SendingToLLM', 'send');
    expect(lineCount(file)).toBe(2);
    sink.close();
    expect(lineCount(file)).toBe(3);
    expect((await loadHistory(file)).records.map((r) => r.description)).toEqual(['user', 'send']);
  });

  it('.write() writes when maxLines are waiting, and the timer writes after maxDelayMs', () => {
    jest.useFakeTimers();
    try {
      const file = path.join(dir, 'bounds.jsonl');
      const sink = JsonlHistorySink.open(file, { runId: 'r', groupCommit: { maxLines: 2, maxDelayMs: 50 } });
      const machine = new StateMachine({ logger: false, sink });
      machine.transition('WaitingForUserInput', 'user');
      machine.transition('SendingToLLM', 'send');
      expect(lineCount(file)).toBe(3); // two lines reached the bound
      machine.transition('ProcessingLLMResponse', 'reply');
      expect(sink.pendingLines).toBe(1);
      jest.advanceTimersByTime(49);
      expect(lineCount(file)).toBe(3);
      jest.advanceTimersByTime(1);
      expect(lineCount(file)).toBe(4);
      expect(sink.pendingLines).toBe(0);
      sink.close();
    } finally {
      jest.useRealTimers();
    }
  });

  it('.write() rolls a short batched write back to the last complete line before the batch', async () => {
    const file = path.join(dir, 'short.jsonl');
    const sink = JsonlHistorySink.open(file, { runId: 'r', groupCommit: true });
    const errors: unknown[] = [];
    const machine = new StateMachine({ logger: false, sink });
    machine.on('sinkError', ({ error }) => errors.push(error));
    turn(machine);
    const before = fs.readFileSync(file, 'utf8');
    machine.transition('WaitingForUserInput', 'user 2 (lost)');
    machine.transition('SendingToLLM', 'send 2 (lost)');
    const real = fs.writeSync;
    let calls = 0;
    const spy = jest.spyOn(nodeFs, 'writeSync').mockImplementation(((
      fd: number,
      data: Buffer | string,
      offset?: number,
      length?: number,
    ) => {
      calls++;
      if (calls === 1) return halfWrite(real, fd, data, offset, length);
      throw enospc();
    }) as typeof fs.writeSync);
    machine.transition('ProcessingLLMResponse', 'reply 2 (lost)');
    machine.transition('EndOfTurn', 'done 2 (lost)');
    spy.mockRestore();
    expect(errors).toEqual([
      expect.objectContaining({
        code: 'write_failed',
        message: expect.stringMatching(/lines 6–9 \(one batched write; none of them was kept\)/),
      }),
    ]);
    expect(fs.readFileSync(file, 'utf8')).toBe(before);
    turn(machine);
    sink.close();
    const loaded = await loadHistory(file);
    expect(loaded.warnings).toEqual([]);
    expect(loaded.records.map((r) => r.description)).toEqual([
      'user',
      'send',
      'reply',
      'done',
      'user',
      'send',
      'reply',
      'done',
    ]);
  });

  it('.flush() throws the failure of a timed flush', () => {
    jest.useFakeTimers();
    try {
      const sink = JsonlHistorySink.open(path.join(dir, 'timed.jsonl'), {
        runId: 'r',
        groupCommit: { maxDelayMs: 10 },
      });
      const machine = new StateMachine({ logger: false, sink });
      machine.transition('WaitingForUserInput', 'user');
      const spy = jest.spyOn(nodeFs, 'writeSync').mockImplementation(() => {
        throw enospc();
      });
      jest.advanceTimersByTime(10);
      spy.mockRestore();
      expect(() => sink.flush()).toThrow(
        expect.objectContaining({ code: 'write_failed', message: expect.stringMatching(/ENOSPC/) }),
      );
      sink.close();
    } finally {
      jest.useRealTimers();
    }
  });

  it.each([
    ['bogus', 'groupCommit'],
    [{ maxLines: 0 }, 'groupCommit.maxLines'],
    [{ maxLines: 1.5 }, 'groupCommit.maxLines'],
    [{ maxDelayMs: -1 }, 'groupCommit.maxDelayMs'],
    [{ maxDelayMs: Number.NaN }, 'groupCommit.maxDelayMs'],
  ])('.open({ groupCommit: %p }) is refused, naming %s', (groupCommit, name) => {
    const file = path.join(dir, 'bad.jsonl');
    expect(() => JsonlHistorySink.open(file, { groupCommit: groupCommit as never })).toThrow(InvalidArgumentError);
    expect(() => JsonlHistorySink.open(file, { groupCommit: groupCommit as never })).toThrow(name);
    expect(fs.existsSync(file)).toBe(false);
  });

  it('.write() loses at most the waiting lines when the process is killed (SIGKILL)', async () => {
    const file = path.join(dir, 'killed.jsonl');
    const maxLines = 40;
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', path.join(__dirname, '..', 'fixtures', 'killedRun.ts'), file, '500', String(maxLines)],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const exited = new Promise<NodeJS.Signals | null>((resolve) =>
      child.on('exit', (_code, signal) => resolve(signal)),
    );
    const movesAtReady = await new Promise<number>((resolve, reject) => {
      let out = '';
      child.stdout.on('data', (chunk: Buffer) => {
        out += chunk.toString();
        const match = /ready (\d+)\n/.exec(out);
        if (match) resolve(Number(match[1]));
      });
      child.on('exit', (code) => reject(new Error(`child exited (${code}) before it was ready: ${stderr}`)));
    });
    child.kill('SIGKILL');
    expect(await exited).toBe('SIGKILL');
    const history = await loadHistory(file);
    // Whole batches only: no cut line, the seq chain unbroken, and no more lost than the buffer.
    expect(history.warnings).toEqual([]);
    expect(fs.readFileSync(file, 'utf8').endsWith('\n')).toBe(true);
    expect(history.records.length).toBeGreaterThanOrEqual(movesAtReady - maxLines);
    expect(history.records.map((r) => r.seq)).toEqual(history.records.map((_, i) => i + 1));
    expect(validateHistory(history.entries)).toEqual({ ok: true, records: history.records.length, issues: [] });
  }, 30_000);
});
