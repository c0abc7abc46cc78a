import { toHistoryTableInfo, type HistoryTableInfo } from './HistoryTableInfo';
import { DEFAULT_TABLE } from '../machine/transitions';
import { HistoryFileError } from './HistoryFileError';

/** Same initial state, states, edges and flags, whatever their order. */
export function sameTable(a: HistoryTableInfo, b: HistoryTableInfo): boolean {
  const key = (t: HistoryTableInfo): string =>
    JSON.stringify([
      t.initial,
      [...t.states].sort(),
      t.edges.map((edge) => JSON.stringify(edge)).sort(),
      [...t.terminal].sort(),
      [...t.error].sort(),
    ]);
  return key(a) === key(b);
}

const DEFAULT_TABLE_INFO = toHistoryTableInfo(DEFAULT_TABLE);

/** A table in a few words; given `other`, also what it adds to or lacks from that one. */
export function describeTable(info: HistoryTableInfo, other?: HistoryTableInfo): string {
  if (sameTable(info, DEFAULT_TABLE_INFO)) return 'the sixteen-state table';
  let text = `a table of ${info.states.length} states (initial ${info.initial})`;
  if (other !== undefined) {
    const list = (names: string[]): string =>
      names.length > 4 ? `${names.slice(0, 4).join(', ')} and ${names.length - 4} more` : names.join(', ');
    const added = info.states.filter((s) => !other.states.includes(s));
    const lacking = other.states.filter((s) => !info.states.includes(s));
    const parts = [
      ...(added.length > 0 ? [`adds ${list(added)}`] : []),
      ...(lacking.length > 0 ? [`lacks ${list(lacking)}`] : []),
    ];
    text += ` that ${parts.length > 0 ? parts.join(' and ') : 'differs in its edges or flags'}`;
  }
  return text;
}

/**
 * `table_mismatch`: a sink opened for one table attached to a machine with another, when its
 * meta line can no longer be rewritten (the table was given, lines follow it, or it is closed).
 */
export function tableMismatch(
  path: string,
  written: HistoryTableInfo,
  machine: HistoryTableInfo,
  tableGiven: boolean,
  closed: boolean,
  linesAfterMeta: number,
): HistoryFileError {
  const why = tableGiven
    ? "pass that machine's table as `{ table }` to JsonlHistorySink.open"
    : closed
      ? 'the sink is already closed'
      : `${linesAfterMeta} line${linesAfterMeta === 1 ? ' was' : 's were'} already written for it; pass the machine's table as \`{ table }\` to JsonlHistorySink.open`;
  return new HistoryFileError(
    'table_mismatch',
    path,
    `the sink was opened for ${describeTable(written)} but attached to a machine with ${describeTable(machine, written)}; ${why}`,
  );
}
