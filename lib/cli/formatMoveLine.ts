import type { HistoryEntry } from '../history/HistoryEntry';
import { escapeControl } from '../internal/escapeControl';
import { formatDuration } from '../internal/formatDuration';
import { formatTime } from '../internal/formatTime';
import { safeStringify } from '../internal/safeStringify';
import { cut } from '../internal/text';

/** The header of the lines `formatMoveLine` prints, in the same columns. */
export const MOVE_LINE_HEADER = `${'seq'.padStart(6)}  ${'time'.padEnd(12)}  ${'move'.padEnd(46)}  ${'in from'.padEnd(9)}  description`;

/**
 * One line of a history entry as it arrives (`inspect --follow`): a move, a rejected move or a
 * reset, in fixed columns so lines printed one at a time line up; undefined for the lines
 * that are not moves (meta, journal). Every string from the file is escaped.
 */
export function formatMoveLine(entry: HistoryEntry, maxDataChars = 120): string | undefined {
  if (entry.kind === 'record') {
    const r = entry.record;
    const data = r.data === undefined ? '' : `  ${cut(escapeControl(safeStringify(r.data)), maxDataChars)}`;
    return row(
      String(r.seq),
      r.at,
      `${escapeControl(r.from)} → ${escapeControl(r.to)}`,
      formatDuration(r.durationMs),
      `${r.forced ? 'FORCED ' : ''}${escapeControl(r.description)}${data}`,
    );
  }
  if (entry.kind === 'rejected') {
    const r = entry.rejected;
    return row(
      '-',
      r.at,
      `${escapeControl(r.from)} ✗ ${escapeControl(r.to)}`,
      '',
      `REJECTED ${escapeControl(r.description)}`,
    );
  }
  if (entry.kind === 'reset') return row('-', entry.reset.at, `${escapeControl(entry.reset.from)} ⟲`, '', 'RESET');
  return undefined;
}

function row(seq: string, at: number, move: string, inFrom: string, description: string): string {
  return `${seq.padStart(6)}  ${formatTime(at, 'HH:mm:ss.SSS').padEnd(12)}  ${move.padEnd(46)}  ${inFrom.padEnd(9)}  ${description}`.trimEnd();
}
