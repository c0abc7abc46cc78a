import { randomUUID } from 'node:crypto';
import { messageOf } from '../internal/messageOf';
import { DEFAULT_TABLE } from '../machine/transitions';
import { DEFAULT_MAX_LINE_BYTES } from './maxLineBytes';
import { storedTable, type StoredTable } from './storedTable';
import type { TransitionTable } from '../machine/TransitionTable';
import { InvalidArgumentError } from '../machine/InvalidArgumentError';

/** Options of `JsonlHistorySink.open(path, options)`: the run id, the table, metadata, and whether to write the meta line. */
export interface JsonlHistorySinkOptions {
  /** Names the run in the meta line. Default: a random UUID. */
  runId?: string;
  /**
   * The machine's table, described in the meta line so the file can be checked without code.
   * Default: the table of the machine the sink is given to (the sixteen-state table until then).
   * A table given here must be the machine's: a machine with another one is refused.
   */
  table?: TransitionTable<string>;
  /** Anything JSON-serializable to keep with the run (task id, model, host). */
  metadata?: unknown;
  /** Write the meta line first. Default true. */
  meta?: boolean;
  /** Replace an existing file. Default false: opening an existing path throws `file_exists`, so no run's history is lost. */
  overwrite?: boolean;
  /** The time written as `startedAt`, epoch milliseconds. Default `Date.now()`. */
  startedAt?: number;
  /**
   * When lines are forced to the disk (fsync), which decides what a power cut can take:
   * - `'none'`: never; the OS writes them back when it likes (a power cut may lose the last
   *   seconds of lines, or leave a hole of NUL bytes that `--salvage` reads past).
   * - `'turn'` (default): when a move reaches a terminal state (a turn ended) and on `close()`;
   *   a power cut loses at most the turn in progress.
   * - `'move'`: after every line; a power cut loses at most the line being written.
   *
   * A process crash (even `kill -9`) loses nothing written in any mode: each line reaches the
   * OS in one write.
   */
  durability?: HistoryDurability;
  /**
   * Opt-in group commit: lines are kept in memory and written together in one `write`, when a
   * move reaches a terminal state (a turn ended), when `maxLines` are waiting, `maxDelayMs`
   * after the first waiting line (an unref'd timer), on `flush()` and on `close()`. `true`
   * takes the defaults (`maxLines` 4096, `maxDelayMs` 200). Default: off, one write per line.
   *
   * What a crash loses: a killed process (`kill -9`) loses the lines still waiting — at most
   * `maxLines`, at most `maxDelayMs` of them, never more than the turn in progress; the lines
   * of every finished turn are in the file. A batched write that fails part-way is cut back
   * to the last complete line before it, so the file never holds half a batch. Durability
   * applies per batch: `'turn'` fsyncs the batch that ends a turn, `'move'` every batch.
   * A failure of a timed flush is thrown by the next `write`, `flush()` or `close()`.
   */
  groupCommit?: boolean | GroupCommitOptions;
  /**
   * The longest line written, in bytes; the readers' default limit unless changed. A line that
   * would be longer (a 70 MB tool result) is written with its content replaced by a
   * placeholder saying what was dropped, and `line_too_long` is thrown, so the file stays
   * readable and the loss is reported. Raise it only together with the readers' `maxLineBytes`.
   */
  maxLineBytes?: number;
}

/** Bounds of `JsonlHistorySinkOptions.groupCommit`. */
export interface GroupCommitOptions {
  /** Write once this many lines are waiting. Default 4096; a positive integer. */
  maxLines?: number;
  /** Write at the latest this many milliseconds after the first waiting line. Default 200; a finite number ≥ 0. */
  maxDelayMs?: number;
}

/** When `JsonlHistorySink` forces its lines to the disk; see `JsonlHistorySinkOptions.durability`. */
export type HistoryDurability = 'none' | 'turn' | 'move';

export const DURABILITIES: readonly HistoryDurability[] = ['none', 'turn', 'move'];

/**
 * The bounds a `groupCommit` option value stands for (maxLines 0: off); throws
 * `InvalidArgumentError` naming `name` for a bad value. Shared with runBatch, which checks it up front.
 * @internal
 */
export function groupCommitBounds(value: unknown, name = 'groupCommit'): { maxLines: number; maxDelayMs: number } {
  if (value === undefined || value === false) return { maxLines: 0, maxDelayMs: 0 };
  if (value === true) return { maxLines: 4096, maxDelayMs: 200 };
  if (typeof value !== 'object' || value === null)
    throw new InvalidArgumentError(name, 'true, false, or { maxLines?, maxDelayMs? }', value);
  const { maxLines = 4096, maxDelayMs = 200 } = value as GroupCommitOptions;
  if (typeof maxLines !== 'number' || !Number.isInteger(maxLines) || maxLines < 1)
    throw new InvalidArgumentError(`${name}.maxLines`, 'a positive integer', maxLines);
  if (typeof maxDelayMs !== 'number' || !Number.isFinite(maxDelayMs) || maxDelayMs < 0)
    throw new InvalidArgumentError(`${name}.maxDelayMs`, 'a finite number of milliseconds ≥ 0', maxDelayMs);
  return { maxLines, maxDelayMs };
}

/** `JsonlHistorySink.open`'s options with their defaults, checked; throws `InvalidArgumentError` naming a bad one. */
export function resolveSinkOptions(options: JsonlHistorySinkOptions): {
  runId: string;
  table: TransitionTable<string>;
  metadata: unknown;
  meta: boolean;
  overwrite: boolean;
  startedAt: number;
  durability: HistoryDurability;
  maxLineBytes: number;
  group: { maxLines: number; maxDelayMs: number };
  stored: StoredTable;
} {
  const {
    runId = randomUUID(),
    table = DEFAULT_TABLE,
    metadata,
    meta = true,
    overwrite = false,
    startedAt = Date.now(),
    durability = 'turn',
    maxLineBytes = DEFAULT_MAX_LINE_BYTES,
  } = options;
  if (!(Number.isSafeInteger(maxLineBytes) && maxLineBytes >= 1024))
    throw new InvalidArgumentError('maxLineBytes', 'a whole number of bytes, at least 1024', maxLineBytes);
  if (typeof runId !== 'string' || runId === '') throw new InvalidArgumentError('runId', 'a non-empty string', runId);
  if (!DURABILITIES.includes(durability))
    throw new InvalidArgumentError('durability', "'none', 'turn' or 'move'", durability);
  const group = groupCommitBounds(options.groupCommit);
  let stored: StoredTable;
  try {
    stored = storedTable(table, options.table !== undefined);
  } catch (error) {
    throw new InvalidArgumentError('table', `a sound transition table (${messageOf(error)})`, table);
  }
  if (typeof startedAt !== 'number' || !Number.isFinite(startedAt))
    throw new InvalidArgumentError('startedAt', 'a finite number of epoch milliseconds', startedAt);
  return { runId, table, metadata, meta, overwrite, startedAt, durability, maxLineBytes, group, stored };
}
