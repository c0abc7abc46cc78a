import fc from 'fast-check';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { JsonlHistorySink } from '../../lib/history/JsonlHistorySink';
import type { TransitionRecord } from '../../lib/machine/TransitionRecord';

// The sink writes the known fields itself and remembers the JSON text of strings it has seen
// and of the last `at`. Whatever it remembers, each line must be what JSON.stringify makes of
// the record: same fields, same order, same values, strings escaped the same way.

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-sm-sink-json-'));
});
afterEach(() => {
  fs.rmSync(dir, { recursive: true, force: true });
});

const hostile = fc.oneof(
  fc.string({ maxLength: 20 }),
  fc.constantFrom('\n', '"', '\\', '\u0000', '\u001b', '\u2028', 'é→', '\ud800', 'SendingToLLM', ''),
  fc.string({ minLength: 250, maxLength: 300 }),
);
const number = fc.oneof(fc.integer(), fc.double(), fc.constantFrom(1.7e12, 1.7e12 + 1, NaN, Infinity, -0));

const record = (strings: string[]) =>
  fc.record({
    from: fc.oneof(fc.constantFrom(...strings), hostile),
    to: fc.oneof(fc.constantFrom(...strings), hostile),
    description: fc.oneof(fc.constantFrom(...strings), hostile),
    at: number,
    durationMs: number,
    forced: fc.boolean(),
    data: fc.option(fc.jsonValue(), { nil: undefined }),
  });

/** What a line must hold: the record as JSON.stringify writes it, read back. */
function expected(r: TransitionRecord<string>): unknown {
  const { seq, from, to, description, at, durationMs, forced, data } = r;
  return JSON.parse(
    JSON.stringify(
      data === undefined
        ? { seq, from, to, description, at, durationMs, forced }
        : { seq, from, to, description, at, durationMs, forced, data },
    ),
  );
}

describe('JsonlHistorySink serialization', () => {
  // With group commit the lines wait in a buffer that a closed sink gives back for the next
  // sink to take: each run here opens a new sink, so a byte left behind would show.
  it.each([
    ['one write per line', {}],
    ['group commit', { groupCommit: true }],
  ])('writes every record exactly as JSON.stringify would, with strings and times repeating (%s)', (_, options) => {
    fc.assert(
      fc.property(
        fc
          .array(hostile, { minLength: 1, maxLength: 5 })
          .chain((strings) => fc.array(record(strings), { minLength: 1, maxLength: 40 })),
        (drafts) => {
          const file = path.join(dir, `run-${Math.random().toString(36).slice(2)}.jsonl`);
          const sink = JsonlHistorySink.open<string>(file, { meta: false, durability: 'none', ...options });
          const records = drafts.map((d, i) => ({ seq: i + 1, ...d }) as TransitionRecord<string>);
          for (const r of records) sink.write(r);
          sink.close();
          const text = fs.readFileSync(file, 'utf8');
          const written = text.split('\n').slice(0, -1);
          expect(written).toHaveLength(records.length);
          written.forEach((line, i) => {
            expect(JSON.parse(line)).toEqual(expected(records[i]!));
            expect(Object.keys(JSON.parse(line) as object)).toEqual(Object.keys(expected(records[i]!) as object));
          });
        },
      ),
      { numRuns: 150 },
    );
  });

  it('stays exact once its memory of strings is full (more than a thousand distinct descriptions)', () => {
    const file = path.join(dir, 'many.jsonl');
    const sink = JsonlHistorySink.open<string>(file, { meta: false, durability: 'none' });
    const records: TransitionRecord<string>[] = [];
    for (let i = 0; i < 3000; i++) {
      const description = i % 3 === 0 ? `step "${i}"\n` : i % 3 === 1 ? 'the same move' : `x${'é'.repeat(i % 400)}`;
      records.push({
        seq: i + 1,
        from: 'A',
        to: i % 2 === 0 ? 'B' : 'A\u2028',
        description,
        at: 1_700_000_000_000 + Math.floor(i / 7),
        durationMs: i % 5,
        forced: false,
      });
    }
    for (const r of records) sink.write(r);
    sink.close();
    const written = fs
      .readFileSync(file, 'utf8')
      .split('\n')
      .slice(0, -1)
      .map((l) => JSON.parse(l) as unknown);
    expect(written).toEqual(records.map(expected));
  });
});
