import type { HistoryItem } from './HistoryEntry';
import { InvalidArgumentError } from '../machine/InvalidArgumentError';

// Checks for the arguments of the analysis functions (validateHistory, summarizeHistory, the
// diagrams and formatters), so bad input fails with an InvalidArgumentError that names the
// argument and the value instead of a TypeError from deep inside. Internal: not exported.

/**
 * Checks one item handed to the analysis functions (`validateHistory`, `summarizeHistory`,
 * the diagrams): a transition record, or an entry read from a history file. Throws
 * `InvalidArgumentError` naming the item (`items[3]`, `items[3].record.from`) and what it was,
 * instead of a `TypeError` from deep inside. Only the fields the analyses rely on are checked;
 * whether their values make sense is for `validateHistory` to report.
 */
export function assertHistoryItem(item: unknown, argument: string): asserts item is HistoryItem {
  if (!isObject(item)) throw new InvalidArgumentError(argument, 'a transition record or history entry', item);
  const kind = item.kind;
  if (kind === undefined) return assertRecord(item, argument);
  switch (kind) {
    case 'record':
      if (!isObject(item.record))
        throw new InvalidArgumentError(`${argument}.record`, 'a transition record', item.record);
      return assertRecord(item.record, argument, '.record');
    case 'meta':
      if (!isObject(item.meta))
        throw new InvalidArgumentError(`${argument}.meta`, 'a meta line { runId, table, ... }', item.meta);
      if (!isObject(item.table) || !isObject(item.table.states))
        throw new InvalidArgumentError(`${argument}.table`, 'a transition table { initial, states }', item.table);
      return;
    case 'rejected':
      if (!isObject(item.rejected))
        throw new InvalidArgumentError(`${argument}.rejected`, 'a rejected move { from, to, ... }', item.rejected);
      return;
    case 'reset':
      if (!isObject(item.reset))
        throw new InvalidArgumentError(`${argument}.reset`, 'a reset marker { from, at, seq }', item.reset);
      return;
    case 'journal':
      if (!isObject(item.journal))
        throw new InvalidArgumentError(`${argument}.journal`, 'a journal line { type, seq, turn, … }', item.journal);
      return;
    case 'http':
      if (!isObject(item.exchange))
        throw new InvalidArgumentError(
          `${argument}.exchange`,
          'an HTTP exchange { type, seq, call, request, … }',
          item.exchange,
        );
      return;
    default:
      throw new InvalidArgumentError(
        `${argument}.kind`,
        "one of 'meta', 'record', 'rejected', 'reset', 'journal', 'http' (or no kind, for a bare record)",
        kind,
      );
  }
}

/** Checks that `items` can be iterated (a string cannot: it is no list of items), naming it otherwise. */
export function assertIterable(items: unknown, argument: string, expected: string): asserts items is Iterable<unknown> {
  const iterable =
    items !== null &&
    (typeof items === 'object' || typeof items === 'function') &&
    typeof (items as { [Symbol.iterator]?: unknown })[Symbol.iterator] === 'function';
  if (!iterable) throw new InvalidArgumentError(argument, expected, items);
}

/** Checks that an options argument, when given, is an object. */
export function assertOptions(options: unknown, argument = 'options'): void {
  if (!isObject(options)) throw new InvalidArgumentError(argument, 'an object', options);
}

/**
 * Checks that `table` has the shape of a transition table, `{ initial: string, states: {...} }`,
 * each state with a `next` array, enough to draw or replay it. Whether it is sound is
 * `checkTable`'s business.
 */
export function assertTableShape(table: unknown, argument: string): void {
  const expected = 'a transition table { initial, states }';
  if (!isObject(table) || typeof table.initial !== 'string' || !isObject(table.states))
    throw new InvalidArgumentError(argument, expected, table);
  for (const [name, spec] of Object.entries(table.states)) {
    if (!isObject(spec) || !Array.isArray(spec.next))
      throw new InvalidArgumentError(
        `${argument}.states.${name}`,
        'a state spec { name, description, next: string[] }',
        spec,
      );
  }
}

/** `within` is the record's place in the argument (`.record`), joined to it only for a message. */
function assertRecord(record: Record<string, unknown>, argument: string, within = ''): void {
  // Field by field, not over a list of keys: this runs once per line read, and a keyed
  // lookup in a loop costs several times a named one.
  if (typeof record.from !== 'string') throw notA(record, argument, within, 'from', 'a state name');
  if (typeof record.to !== 'string') throw notA(record, argument, within, 'to', 'a state name');
  if (typeof record.seq !== 'number') throw notA(record, argument, within, 'seq', 'a number');
  if (typeof record.at !== 'number') throw notA(record, argument, within, 'at', 'a number');
  if (typeof record.durationMs !== 'number') throw notA(record, argument, within, 'durationMs', 'a number');
}

function notA(
  record: Record<string, unknown>,
  argument: string,
  within: string,
  key: string,
  expected: string,
): InvalidArgumentError {
  return new InvalidArgumentError(`${argument}${within}.${key}`, expected, record[key]);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
