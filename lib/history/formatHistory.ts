import { formatTime } from '../internal/formatTime';
import { formatDuration } from '../internal/formatDuration';
import { InvalidArgumentError } from '../machine/InvalidArgumentError';
import type { TransitionRecord } from '../machine/TransitionRecord';
import { safeStringify } from '../internal/safeStringify';
import { cut } from '../internal/text';
import { escapeControl } from '../internal/escapeControl';

/** Options of `formatHistory`: the time format, and whether and how much of each move's data to show. */
export interface FormatHistoryOptions {
  /** date-fns pattern for the time column (local time). Default `HH:mm:ss.SSS`. */
  timeFormat?: string;
  /** Show the data attached to each move. Default true. */
  data?: boolean;
  /** Cut each move's data to this many characters, so a large payload cannot bury the moves. Default 120. */
  maxDataChars?: number;
}

/**
 * A history as a table for people: seq, time, from → to, the time spent in `from`, the
 * description (and data), with forced moves marked `FORCED`.
 *
 * ```
 *  seq  time          move                                  in from  description
 *    1  12:00:00.000  Ready → WaitingForUserInput           0 ms     turn 1 starts
 * ```
 */
export function formatHistory(
  records: readonly TransitionRecord<string>[],
  options: FormatHistoryOptions = {},
): string {
  if (!Array.isArray(records)) throw new InvalidArgumentError('records', 'an array of transition records', records);
  const { timeFormat = 'HH:mm:ss.SSS', data: showData = true, maxDataChars = 120 } = options;
  const bad = records.findIndex(
    (r) => typeof r !== 'object' || r === null || typeof r.seq !== 'number' || typeof r.at !== 'number',
  );
  if (bad !== -1)
    throw new InvalidArgumentError(
      `records[${bad}]`,
      'a transition record { seq, from, to, description, at, durationMs, forced }',
      records[bad],
    );
  if (records.length === 0) return '(no transitions)';
  const rows = records.map((r) => [
    String(r.seq),
    formatTime(r.at, timeFormat),
    `${escapeControl(String(r.from))} → ${escapeControl(String(r.to))}`,
    formatDuration(Number(r.durationMs)),
    `${r.forced === true ? 'FORCED ' : ''}${escapeControl(String(r.description))}${showData && r.data !== undefined ? `  ${cut(escapeControl(safeStringify(r.data)), maxDataChars)}` : ''}`,
  ]);
  const header = ['seq', 'time', 'move', 'in from', 'description'];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)));
  const line = (cells: string[]): string =>
    cells
      .map((c, i) => (i === 0 ? c.padStart(widths[i]!) : i === cells.length - 1 ? c : c.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  return [line(header), ...rows.map(line)].join('\n');
}
