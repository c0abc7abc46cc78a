import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { JsonlHistorySink } from '../../lib/history/JsonlHistorySink';
import { toHistoryTableInfo } from '../../lib/history/HistoryTableInfo';
import { storedTable } from '../../lib/history/storedTable';
import { createTable } from '../../lib/machine/createTable';
import { InvalidArgumentError } from '../../lib/machine/InvalidArgumentError';
import type { TransitionTable } from '../../lib/machine/TransitionTable';
import { DEFAULT_TABLE } from '../../lib/machine/transitions';

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'asm-stored-table-'));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

const firstLine = (file: string): string => fs.readFileSync(file, 'utf8').split('\n')[0]!;

describe('storedTable and the meta line', () => {
  it('the meta line is exactly JSON.stringify of the meta object, with and without metadata', () => {
    for (const metadata of [undefined, { taskId: 'a "quoted" id', n: [1, 2] }]) {
      const file = path.join(dir, `run-${metadata === undefined ? 'plain' : 'meta'}.jsonl`);
      JsonlHistorySink.open(file, { runId: 'r1', startedAt: 1_700_000_000_000, metadata }).close();
      const line = firstLine(file);
      const expected = {
        type: 'meta',
        version: (JSON.parse(line) as { version: string }).version,
        runId: 'r1',
        startedAt: 1_700_000_000_000,
        table: toHistoryTableInfo(DEFAULT_TABLE),
        ...(metadata === undefined ? {} : { metadata }),
      };
      expect(line).toBe(JSON.stringify(expected));
    }
  });

  it('a frozen table is worked out once; a table that can change is worked out at every file', () => {
    const frozen = createTable(
      [
        { name: 'A', description: 'a', next: ['B'] },
        { name: 'B', description: 'b', next: ['A'], isTerminal: true },
      ],
      'A',
    );
    expect(storedTable(frozen, true)).toBe(storedTable(frozen, true));
    const mutable = {
      initial: 'A',
      states: {
        A: { name: 'A', description: 'a', next: ['B'] },
        B: { name: 'B', description: 'b', next: ['A'], isTerminal: true },
      },
    } as unknown as TransitionTable<string>;
    const one = path.join(dir, 'one.jsonl');
    JsonlHistorySink.open(one, { table: mutable }).close();
    // Changed between two files: the second describes the table as it is now.
    (mutable.states as unknown as Record<string, { next: string[] }>).B!.next.push('C');
    (mutable.states as unknown as Record<string, unknown>).C = { name: 'C', description: 'c', next: ['A'] };
    const two = path.join(dir, 'two.jsonl');
    JsonlHistorySink.open(two, { table: mutable }).close();
    const states = (file: string): string[] =>
      (JSON.parse(firstLine(file)) as { table: { states: string[] } }).table.states;
    expect(states(one)).toEqual(['A', 'B']);
    expect(states(two)).toEqual(['A', 'B', 'C']);
  });

  it('an unsound table is refused at every open, naming the table, and leaves no file', () => {
    const unsound = Object.freeze({
      initial: 'A',
      states: Object.freeze({
        A: Object.freeze({ name: 'A', description: 'a', next: Object.freeze(['Nowhere']) }),
      }),
    }) as unknown as TransitionTable<string>;
    for (const name of ['x.jsonl', 'y.jsonl']) {
      const file = path.join(dir, name);
      expect(() => JsonlHistorySink.open(file, { table: unsound })).toThrow(InvalidArgumentError);
      expect(() => JsonlHistorySink.open(file, { table: unsound })).toThrow(/table.*a sound transition table/);
      expect(fs.existsSync(file)).toBe(false);
    }
  });
});
