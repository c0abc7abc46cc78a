import { isDeeplyFrozen } from '../machine/isDeeplyFrozen';
import { sharedValidator } from '../machine/TransitionValidator';
import type { TransitionTable } from '../machine/TransitionTable';
import { toHistoryTableInfo, type HistoryTableInfo } from './HistoryTableInfo';

/** What a history file keeps of a table, and what its writer needs of it. */
export interface StoredTable {
  /** The table as a meta line stores it. */
  readonly info: HistoryTableInfo;
  /** `,"table":` and `info` as JSON, in UTF-8: the larger part of every meta line. */
  readonly tableBytes: Buffer;
  /** The terminal states: reaching one ends a turn. */
  readonly terminal: ReadonlySet<string>;
}

/** Per table frozen all through: worked out once. */
const known = new WeakMap<object, StoredTable>();

/**
 * What a history file keeps of `table`, with `check` first asserting it is sound
 * (`InvalidTableError` otherwise). A batch opens one file per run, each with the same table: a
 * table frozen all through (every table the library builds) is converted and checked once, not
 * once per file; any other is worked out each time, since it may have changed since.
 */
export function storedTable(table: TransitionTable<string>, check: boolean): StoredTable {
  // The check is the machine's own, made once per frozen table and shared with every machine.
  if (check) sharedValidator(table);
  let stored = known.get(table);
  if (stored === undefined) {
    const info = toHistoryTableInfo(table);
    const terminal = new Set<string>();
    for (const [name, spec] of Object.entries(table.states)) if (spec.isTerminal) terminal.add(name);
    stored = { info, tableBytes: Buffer.from(`,"table":${JSON.stringify(info)}`, 'utf8'), terminal };
    if (isDeeplyFrozen(table)) known.set(table, stored);
  }
  return stored;
}
