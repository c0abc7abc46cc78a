import * as fs from 'node:fs';
// The module object itself (not the namespace copy), so a spy replaces what the sink calls.
import nodeFs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
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

const enospc = (): NodeJS.ErrnoException => Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });

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
    const spy = jest.spyOn(nodeFs, 'writeSync').mockImplementation(((fd: number, data: Buffer | string, offset?: number, length?: number) => {
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

  it('.write() starts the next line on a new line when the half line cannot be cut back', async () => {
    const file = path.join(dir, 'run.jsonl');
    const sink = JsonlHistorySink.open(file, { runId: 'r' });
    const machine = new StateMachine({ logger: false, sink });
    machine.on('sinkError', () => undefined);
    machine.transition('WaitingForUserInput', 'user');
    const real = fs.writeSync;
    let calls = 0;
    jest.spyOn(nodeFs, 'writeSync').mockImplementation(((fd: number, data: Buffer | string, offset?: number, length?: number) => {
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
    ['turn', 2], // the terminal move, and close()
    ['move', 6], // meta, four moves, close()
  ] as const)('.open({ durability: %s }) forces lines to the disk %i times for one turn', (durability, syncs) => {
    const file = path.join(dir, `${durability}.jsonl`);
    const spy = jest.spyOn(nodeFs, 'fsyncSync');
    const sink = JsonlHistorySink.open(file, { durability });
    turn(new StateMachine({ logger: false, sink }));
    sink.close();
    expect(spy).toHaveBeenCalledTimes(syncs);
  });

  it('.open() rejects an unknown durability and a table that is not one, by name', () => {
    expect(() => JsonlHistorySink.open(path.join(dir, 'a.jsonl'), { durability: 'always' as never })).toThrow(InvalidArgumentError);
    expect(() => JsonlHistorySink.open(path.join(dir, 'a.jsonl'), { durability: 'always' as never })).toThrow(/durability/);
    expect(() => JsonlHistorySink.open(path.join(dir, 'b.jsonl'), { table: 5 as never })).toThrow(/Expected `table` to be a sound transition table/);
    expect(fs.readdirSync(dir)).toEqual([]);
  });
});

describe('readHistory on damaged files', () => {
  const good = (seq: number, to = 'WaitingForUserInput', from = 'Ready'): string => JSON.stringify({ seq, from, to, description: `r${seq}`, at: seq, durationMs: 0, forced: false });

  it('loadHistory() names a glued middle line and says --salvage exists; salvage reads the rest', async () => {
    const file = path.join(dir, 'glued.jsonl');
    fs.writeFileSync(file, `${good(1)}\n${good(2).slice(0, 20)}${good(3)}\n${good(4)}\n`);
    await expect(loadHistory(file)).rejects.toThrow(expect.objectContaining({ code: 'corrupt_line', line: 2, message: expect.stringMatching(/--salvage/) }));
    const loaded = await loadHistory(file, { salvage: true });
    expect(loaded.records.map((r) => r.seq)).toEqual([1, 4]);
    expect(loaded.skippedLines).toEqual([2]);
    expect(loaded.warnings[0]).toMatchObject({ code: 'skipped_line', line: 2 });
  });

  it('loadHistory({ salvage: true }) skips a hole of NUL bytes left by a power cut', async () => {
    const file = path.join(dir, 'hole.jsonl');
    fs.writeFileSync(file, Buffer.concat([Buffer.from(`${good(1)}\n`), Buffer.alloc(4096), Buffer.from(`\n${good(3)}\n`)]));
    await expect(loadHistory(file)).rejects.toThrow(HistoryFileError);
    const loaded = await loadHistory(file, { salvage: true });
    expect(loaded.records.map((r) => r.seq)).toEqual([1, 3]);
    expect(loaded.skippedLines).toEqual([2]);
  });

  it('readHistory() refuses a line over maxLineBytes, naming the line and its size, without holding it', async () => {
    const file = path.join(dir, 'long.jsonl');
    fs.writeFileSync(file, `${good(1)}\n${'x'.repeat(5000)}\n${good(2)}\n`);
    await expect(loadHistory(file, { maxLineBytes: 1000 })).rejects.toThrow(expect.objectContaining({ code: 'line_too_long', line: 2, message: expect.stringMatching(/longer than the limit of 1,000 bytes/) }));
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
    for await (const entry of readHistory('-', { input: input() })) if (entry.kind === 'record') seqs.push(entry.record.seq);
    expect(seqs).toEqual([1, 2]);
  });
});
