import { JsonlHistorySink } from '../../history/JsonlHistorySink';
import type { JsonlHistorySinkOptions } from '../../history/JsonlHistorySinkOptions';
import type { TransitionTable } from '../../machine/TransitionTable';

/**
 * Opens a run's history file for the machine that writes it. The machine exists before its
 * file (only a run that really starts gets one), so the sink never sees the machine's `attach`:
 * the table is given here instead, or a run on an extended table (approval, compaction) would
 * write a meta line naming the sixteen states, and its file would not validate on its own. A
 * table given in `options` must be the machine's: another is refused (`table_mismatch`).
 */
export function openRunSink(
  file: string,
  options: JsonlHistorySinkOptions | undefined,
  table: TransitionTable<string>,
): JsonlHistorySink {
  const given = options?.table;
  // Object.assign, not a spread then a key, which V8 keeps in a slow form (bench: batch).
  const sink = JsonlHistorySink.open(file, Object.assign({}, options, { table: given ?? table }));
  if (given !== undefined && given !== table) {
    try {
      sink.attach(table);
    } catch (error) {
      sink.close();
      throw error;
    }
  }
  return sink;
}
