import fc from 'fast-check';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { HistoryEntry } from '../../lib/history/HistoryEntry';
import { JsonlHistorySink } from '../../lib/history/JsonlHistorySink';
import { loadHistory } from '../../lib/history/loadHistory';
import { parseHistoryLine } from '../../lib/history/parseHistoryLine';
import { RecordLineScanner } from '../../lib/history/RecordLineScanner';
import type { TransitionRecord } from '../../lib/machine/TransitionRecord';

/** A record line in exactly the form JsonlHistorySink.write gives it (JSON.stringify keeps key order). */
function sinkLine(record: TransitionRecord<string>): string {
  return JSON.stringify(record);
}

/** The general path on the line at the start of `bytes`, decoded and trimmed as the reader does. */
function general(bytes: Buffer, line: number): { entry: HistoryEntry | undefined; newline: number } {
  const newline = bytes.indexOf(10);
  let text = bytes.toString('utf8', 0, newline);
  if (text.endsWith('\r')) text = text.slice(0, -1);
  const parsed = parseHistoryLine(text, line);
  return { entry: parsed.ok ? parsed.entry : undefined, newline };
}

/** The fast path on the same bytes: what it returns, when it returns anything, must be the general path's entry exactly. */
function expectSameAsGeneral(scanner: RecordLineScanner, bytes: Buffer, line = 5): HistoryEntry | undefined {
  const fast = scanner.scan(bytes, 0, bytes.length, line);
  if (fast === undefined) return undefined;
  const slow = general(bytes, line);
  expect(slow.entry).toBeDefined();
  // toStrictEqual tells -0 from 0 and a missing key from one set to undefined; the key order is the record's own.
  expect(fast).toStrictEqual(slow.entry);
  expect(Object.keys((fast as { record: object }).record)).toEqual(
    Object.keys((slow.entry as { record: object }).record),
  );
  expect(scanner.newline).toBe(slow.newline);
  return fast;
}

const record: TransitionRecord<string> = {
  seq: 3,
  from: 'SendingToLLM',
  to: 'ProcessingLLMResponse',
  description: 'reply',
  at: 1735689600021,
  durationMs: 20,
  forced: false,
};

const hostileChar = fc.constantFrom(
  '\n',
  '\r',
  '\u001b',
  '\u0000',
  '\u007f',
  '\u0085',
  '"',
  '\\',
  '/',
  ',',
  '}',
  '{',
  ':',
  ' ',
  '\u2028',
  '\ud800',
  'é',
  '→',
  '😀',
  '\ufeff',
);
const hostileString = fc
  .array(fc.oneof(hostileChar, fc.string({ maxLength: 4 }), fc.string({ unit: 'grapheme', maxLength: 3 })), {
    maxLength: 10,
  })
  .map((parts) => parts.join(''));
const name = fc.oneof(
  fc.constantFrom('Ready', 'SendingToLLM', 'Error', '__proto__', 'constructor', '', 'x'.repeat(70)),
  hostileString,
);
const number = fc.oneof(
  fc.integer(),
  fc.double(),
  fc.constantFrom(
    0,
    -0,
    1e21,
    1e-7,
    2 ** 53,
    2 ** 53 + 2,
    -(2 ** 53),
    123456789012345,
    1234567890123456,
    0.1,
    1.7e308,
    5e-324,
  ),
);
const anyRecord = fc.record(
  {
    seq: fc.oneof(fc.integer({ min: -2, max: 1e6 }), number),
    from: name,
    to: name,
    description: hostileString,
    at: number,
    durationMs: number,
    forced: fc.boolean(),
    data: fc.jsonValue(),
  },
  { requiredKeys: ['seq', 'from', 'to', 'description', 'at', 'durationMs', 'forced'] },
) as fc.Arbitrary<TransitionRecord<string>>;
/** Bytes that matter to the scanner, to splice into a valid line. */
const significantByte = fc.oneof(
  fc.constantFrom(
    0x22,
    0x5c,
    0x2c,
    0x7d,
    0x7b,
    0x3a,
    0x20,
    0x0d,
    0x0a,
    0x09,
    0x00,
    0x2d,
    0x2e,
    0x2b,
    0x65,
    0x45,
    0x30,
    0x31,
    0x39,
    0x80,
    0xc3,
    0xe2,
    0xed,
    0xf0,
    0xff,
  ),
  fc.integer({ min: 0, max: 255 }),
);
type Edit = { kind: 'insert' | 'replace' | 'delete' | 'cut'; at: number; byte: number };
const edit: fc.Arbitrary<Edit> = fc.record({
  kind: fc.constantFrom('insert', 'replace', 'delete', 'cut'),
  at: fc.nat(),
  byte: significantByte,
});

function applyEdits(line: Buffer, edits: readonly Edit[]): Buffer {
  let bytes = [...line];
  for (const { kind, at, byte } of edits) {
    const i = bytes.length === 0 ? 0 : at % bytes.length;
    if (kind === 'insert') bytes.splice(i, 0, byte);
    else if (kind === 'replace') bytes[i] = byte;
    else if (kind === 'delete') bytes.splice(i, 1);
    else bytes = bytes.slice(0, i);
  }
  return Buffer.from(bytes);
}

describe('RecordLineScanner', () => {
  it(".scan() reads the sink's record lines, with and without data, as parseHistoryLine does", () => {
    const scanner = new RecordLineScanner();
    const lines = [
      record,
      { ...record, forced: true, data: { tool: 'bash', n: [1, 2.5, null], ok: true } },
      { ...record, data: null },
      { ...record, data: 'x' },
      { ...record, durationMs: 0.25, at: 1.5e12 },
    ];
    for (const r of lines) {
      const entry = expectSameAsGeneral(scanner, Buffer.from(`${sinkLine(r)}\n`));
      expect(entry).toEqual({ kind: 'record', line: 5, record: r });
    }
    // Windows line ends too.
    expect(expectSameAsGeneral(scanner, Buffer.from(`${sinkLine(record)}\r\n`))).toEqual({
      kind: 'record',
      line: 5,
      record,
    });
  });

  it('.scan() stops at the first newline and reports where it is', () => {
    const scanner = new RecordLineScanner();
    const text = `${sinkLine(record)}\n${sinkLine({ ...record, seq: 4 })}\n`;
    const bytes = Buffer.from(text);
    expect(scanner.scan(bytes, 0, bytes.length, 1)).toEqual({ kind: 'record', line: 1, record });
    expect(scanner.newline).toBe(text.indexOf('\n'));
    expect(scanner.scan(bytes, scanner.newline + 1, bytes.length, 2)).toEqual({
      kind: 'record',
      line: 2,
      record: { ...record, seq: 4 },
    });
    expect(scanner.newline).toBe(bytes.length - 1);
  });

  it('.scan() gives the same strings for the same bytes: repeated names come from its cache', () => {
    const scanner = new RecordLineScanner();
    const bytes = Buffer.from(`${sinkLine(record)}\n`);
    const a = scanner.scan(bytes, 0, bytes.length, 1) as { record: TransitionRecord<string> };
    const b = scanner.scan(
      Buffer.from(`${sinkLine({ ...record, seq: 9, from: 'Ready' })}\n`),
      0,
      bytes.length + 10,
      2,
    ) as { record: TransitionRecord<string> };
    expect(b.record.to).toBe(a.record.to);
    expect(b.record.from).toBe('Ready');
  });

  it(".scan() leaves to the general path what is not the sink's exact form, or not valid", () => {
    const scanner = new RecordLineScanner();
    const declined = [
      '{"type":"reset","from":"Error","at":10,"seq":4}',
      '{"seq": 3,"from":"A","to":"B","description":"d","at":1,"durationMs":2,"forced":false}',
      '{"from":"A","seq":3,"to":"B","description":"d","at":1,"durationMs":2,"forced":false}',
      '{"seq":3,"from":"A","to":"B","description":"say \\"hi\\"","at":1,"durationMs":2,"forced":false}',
      '{"seq":3,"from":"A","to":"B","description":"d","at":1,"durationMs":2,"forced":false,"extra":1}',
      '{"seq":3,"from":"A","to":"B","description":"d","at":1,"durationMs":2,"forced":false,"data":1,"seq":4}',
      '{"seq":3,"from":"A","to":"B","description":"d","at":1,"durationMs":2,"forced":false} ',
      '{"seq":0,"from":"A","to":"B","description":"d","at":1,"durationMs":2,"forced":false}',
      '{"seq":3,"from":"","to":"B","description":"d","at":1,"durationMs":2,"forced":false}',
      '{"seq":3,"from":"A","to":"B","description":"d","at":1e999,"durationMs":2,"forced":false}',
      '{"seq":03,"from":"A","to":"B","description":"d","at":1,"durationMs":2,"forced":false}',
      '{"seq":3,"from":"A","to":"B","description":"d\tx","at":1,"durationMs":2,"forced":false}',
      '{"seq":3,"from":"A","to":"B","description":"d","at":1,"durationMs":2,"forced":false,"data":}',
      '{"seq":3,"from":"A","to":"B","description":"d","at":1,"durationMs":2,"forced":false}}',
      '{"seq":3,"from":"A","to":"B","description":"d","at":1,"durationMs":2,"forced":0}',
      '{"seq":3,"from":"A","to":"B","description":"d","at":1,"durationMs":2,"forced":false',
    ];
    for (const line of declined) expect(scanner.scan(Buffer.from(`${line}\n`), 0, line.length + 1, 1)).toBeUndefined();
    // No newline before the limit: the line is not complete.
    const whole = Buffer.from(`${sinkLine(record)}\n`);
    expect(scanner.scan(whole, 0, whole.length - 1, 1)).toBeUndefined();
  });

  it('.scan() equals parseHistoryLine with every byte value at every place in a string (it reads strings four bytes at a time)', () => {
    const scanner = new RecordLineScanner();
    const prefix = Buffer.from(
      sinkLine(record).slice(0, sinkLine(record).indexOf('"description":"') + '"description":"'.length),
    );
    const suffix = Buffer.from(sinkLine(record).slice(sinkLine(record).indexOf('","at":')) + '\n');
    let read = 0;
    for (let byte = 0; byte < 256; byte++) {
      for (let place = 0; place < 9; place++) {
        const description = Buffer.alloc(9, 0x61);
        description[place] = byte;
        if (expectSameAsGeneral(scanner, Buffer.concat([prefix, description, suffix])) !== undefined) read++;
      }
    }
    // Every byte from space up that is not a quote or a backslash, ASCII or not, is read by the fast path.
    expect(read).toBe((256 - 0x20 - 2) * 9);
  });

  it('.scan() equals parseHistoryLine with every byte value at every place in a number', () => {
    const scanner = new RecordLineScanner();
    const text = sinkLine(record);
    const from = text.indexOf('"at":') + '"at":'.length;
    const to = text.indexOf(',"durationMs"');
    let read = 0;
    for (let byte = 0; byte < 256; byte++) {
      for (let place = 0; place < 13; place++) {
        const number = Buffer.from('1735689600021');
        number[place] = byte;
        if (
          expectSameAsGeneral(
            scanner,
            Buffer.concat([Buffer.from(text.slice(0, from)), number, Buffer.from(`${text.slice(to)}\n`)]),
          ) !== undefined
        )
          read++;
      }
    }
    // Read by the fast path: a digit anywhere (but 0 first), a leading minus, a dot inside, and
    // e or E where the exponent after it leaves the number finite (the last five places).
    expect(read).toBe(9 + 12 * 10 + 1 + 11 + 2 * 5);
  });

  it('.scan() equals parseHistoryLine on generated record lines, hostile strings and numbers included (property)', () => {
    const scanner = new RecordLineScanner();
    fc.assert(
      fc.property(anyRecord, fc.boolean(), (r, crlf) => {
        expectSameAsGeneral(scanner, Buffer.from(`${sinkLine(r)}${crlf ? '\r\n' : '\n'}`));
      }),
      { numRuns: 2000 },
    );
  });

  it('.scan() reads every valid sink line whose strings need no escape (property)', () => {
    const scanner = new RecordLineScanner();
    const plain = fc.string({
      unit: fc.constantFrom('a', 'Z', ' ', ':', '-', 'é', '→', '😀', '0'),
      minLength: 1,
      maxLength: 80,
    });
    const valid = fc.record(
      {
        seq: fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }),
        from: plain,
        to: plain,
        description: fc.oneof(plain, fc.constant('')),
        at: fc.oneof(fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true })),
        durationMs: fc.double({ noNaN: true, noDefaultInfinity: true }),
        forced: fc.boolean(),
        data: fc.jsonValue(),
      },
      { requiredKeys: ['seq', 'from', 'to', 'description', 'at', 'durationMs', 'forced'] },
    ) as fc.Arbitrary<TransitionRecord<string>>;
    fc.assert(
      fc.property(valid, (r) => {
        expect(expectSameAsGeneral(scanner, Buffer.from(`${sinkLine(r)}\n`))).toBeDefined();
      }),
      { numRuns: 1000 },
    );
  });

  it('.scan() equals parseHistoryLine on damaged lines: bytes inserted, replaced, deleted, cut, invalid UTF-8 (property)', () => {
    const scanner = new RecordLineScanner();
    fc.assert(
      fc.property(anyRecord, fc.array(edit, { minLength: 1, maxLength: 4 }), (r, edits) => {
        const damaged = applyEdits(Buffer.from(sinkLine(r)), edits);
        expectSameAsGeneral(scanner, Buffer.concat([damaged, Buffer.from('\n')]));
      }),
      { numRuns: 5000 },
    );
  });

  it('.scan() equals parseHistoryLine on random bytes after the record prefix (property)', () => {
    const scanner = new RecordLineScanner();
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 200 }), (tail) => {
        expectSameAsGeneral(scanner, Buffer.concat([Buffer.from('{"seq":'), tail, Buffer.from('\n')]));
      }),
      { numRuns: 2000 },
    );
  });
});

describe('RecordLineScanner without data', () => {
  /** The fast path without data: a line it reads is one the general path reads, to the same record less its data. */
  function expectSameLessData(scanner: RecordLineScanner, bytes: Buffer): void {
    const fast = scanner.scan(bytes, 0, bytes.length, 5);
    if (fast === undefined) return;
    const slow = general(bytes, 5);
    expect(slow.entry?.kind).toBe('record');
    const { data: _data, ...record } = (slow.entry as { record: TransitionRecord<string> }).record;
    expect(fast).toStrictEqual({ kind: 'record', line: 5, record });
    expect(scanner.newline).toBe(slow.newline);
  }

  it('.scan() checks the data is JSON and leaves it out of the record', () => {
    const scanner = new RecordLineScanner(false);
    const line = (data: string): Buffer => Buffer.from(`${sinkLine(record).slice(0, -1)},"data":${data}}\n`);
    expect(scanner.scan(line('{"tool":"bash","n":[1,2.5,null]}'), 0, 200, 1)).toEqual({
      kind: 'record',
      line: 1,
      record,
    });
    expect(scanner.scan(line('{"tool":"bash",}'), 0, 200, 1)).toBeUndefined();
    expect(scanner.scan(line('{"tool":"bash"}}'), 0, 200, 1)).toBeUndefined();
    // Valid, but not in the plain form: JSON.parse judges it, and the record still has no data.
    expect(scanner.scan(line('{ "tool": "bash" }'), 0, 200, 1)).toEqual({ kind: 'record', line: 1, record });
  });

  it('.scan() reads a line only when the general path reads it, on generated and damaged lines (property)', () => {
    const scanner = new RecordLineScanner(false);
    fc.assert(
      fc.property(anyRecord, fc.array(edit, { maxLength: 3 }), (r, edits) => {
        const damaged = applyEdits(Buffer.from(sinkLine(r)), edits);
        expectSameLessData(scanner, Buffer.concat([damaged, Buffer.from('\n')]));
      }),
      { numRuns: 5000 },
    );
  });
});

describe('the history reader with its fast path', () => {
  let dir: string;
  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-sm-scan-'));
  });
  afterAll(() => {
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it("loadHistory() of a sink's file over several chunks equals parsing each line with parseHistoryLine", async () => {
    const file = path.join(dir, 'run.jsonl');
    const sink = JsonlHistorySink.open(file, { durability: 'none' });
    // Over 2 MiB, so lines straddle the reader's 1 MiB chunks; every kind of record line the sink writes.
    for (let seq = 1; seq <= 16_000; seq++) {
      sink.write({
        seq,
        from: seq % 2 === 0 ? 'SendingToLLM' : 'Error',
        to: seq % 2 === 0 ? 'Error' : 'SendingToLLM',
        description: seq % 3 === 0 ? `turn ${seq} "quoted" → é` : 'ok',
        at: 1e12 + seq * 1.5,
        durationMs: seq % 7,
        forced: seq % 11 === 0,
        ...(seq % 5 === 0 ? { data: { seq, text: 'x'.repeat(seq % 200) } } : {}),
      });
    }
    sink.close();
    const lines = fs.readFileSync(file, 'utf8').split('\n').slice(0, -1);
    const expected = lines.map((text, i) => {
      const parsed = parseHistoryLine(text, i + 1);
      if (!parsed.ok) throw new Error(parsed.reason);
      return parsed.entry;
    });
    expect(fs.statSync(file).size).toBeGreaterThan(2 * 1024 * 1024);
    const loaded = await loadHistory(file);
    expect(loaded.entries).toStrictEqual(expected);
  });
});
