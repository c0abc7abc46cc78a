import { randomUUID } from 'node:crypto';
import * as fs from 'node:fs';
import type { StateName } from '../../states/StateName';
import { describeValue } from '../internal/describeValue';
import type { HistoryMeta, RejectedMove, ResetMarker } from './HistoryEntry';
import { HistoryFileError } from './HistoryFileError';
import { toHistoryTableInfo, type HistoryTableInfo } from './HistoryTableInfo';
import type { IllegalTransitionError } from '../machine/IllegalTransitionError';
import { InvalidArgumentError } from '../machine/InvalidArgumentError';
import type { HistorySink, ResetInfo } from '../machine/StateMachine';
import type { TransitionRecord } from '../machine/TransitionRecord';
import type { TransitionTable } from '../machine/TransitionTable';
import { DEFAULT_TABLE } from '../machine/transitions';
import { VERSION } from '../internal/version';
import { messageOf } from '../internal/messageOf';

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
}

const APPEND_NEW = fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL | fs.constants.O_APPEND;
const APPEND_TRUNCATE = fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_TRUNC | fs.constants.O_APPEND;

/**
 * A `HistorySink` that writes a JSON Lines file: an optional meta line, then one line per
 * record (exactly the `TransitionRecord` fields), with rejected moves and resets as lines
 * marked by `type`. Each line is one synchronous `write` on a file opened for append, so a
 * crash (even `kill -9`) loses at most the line being written and never damages an earlier
 * one. The data reaches the operating system at once; it is not fsync'ed, so a power cut
 * may lose what the disk had not yet stored.
 *
 * Opening and closing are explicit. A failed write throws `HistoryFileError`; the machine
 * catches it and reports it as a `sinkError` event and an error log, so it is never silent.
 *
 * The meta line describes the table of the machine the sink is given to: opened without
 * `table`, the sink rewrites its meta line when the machine (through `attach`) turns out to
 * use another table, as long as nothing else has been written yet.
 *
 * ```ts
 * const sink = JsonlHistorySink.open('run.jsonl', { runId: 'task-42' });
 * const machine = new StateMachine({ sink });
 * // ... run ...
 * sink.close();
 * ```
 */
export class JsonlHistorySink<S extends string = StateName> implements HistorySink<S> {
  /** The path the sink writes to, as given. */
  readonly path: string;
  /** The run id written in the meta line (or that would have been). */
  readonly runId: string;
  #fd: number | undefined;
  #lines = 0;
  #lastSeq = 0;
  /** The meta line as written, with the table it describes; undefined with `meta: false`. */
  #meta: HistoryMeta | undefined;
  /** Whether the caller chose the table, rather than the default standing in until `attach`. */
  #tableGiven = false;

  private constructor(path: string, fd: number, runId: string) {
    this.path = path;
    this.#fd = fd;
    this.runId = runId;
  }

  /**
   * Creates the file (or replaces it with `overwrite: true`), writes the meta line, and
   * returns the open sink. Throws `HistoryFileError` (`file_exists`, `open_failed`,
   * `write_failed`) or `InvalidArgumentError` for a bad option.
   */
  static open<S extends string = StateName>(path: string, options: JsonlHistorySinkOptions = {}): JsonlHistorySink<S> {
    if (typeof path !== 'string' || path === '') throw new InvalidArgumentError('path', 'a non-empty file path', path);
    if (typeof options !== 'object' || options === null) throw new InvalidArgumentError('options', 'an object', options);
    const { runId = randomUUID(), table = DEFAULT_TABLE, metadata, meta = true, overwrite = false, startedAt = Date.now() } = options;
    if (typeof runId !== 'string' || runId === '') throw new InvalidArgumentError('runId', 'a non-empty string', runId);
    if (typeof startedAt !== 'number' || !Number.isFinite(startedAt)) throw new InvalidArgumentError('startedAt', 'a finite number of epoch milliseconds', startedAt);
    const metaLine: HistoryMeta | undefined = meta
      ? metadata === undefined
        ? { type: 'meta', version: VERSION, runId, startedAt, table: toHistoryTableInfo(table) }
        : { type: 'meta', version: VERSION, runId, startedAt, table: toHistoryTableInfo(table), metadata }
      : undefined;
    // Serialize before creating the file, so bad metadata leaves no empty file behind.
    let metaText: string | undefined;
    if (metaLine !== undefined) {
      try {
        metaText = JSON.stringify(metaLine);
      } catch {
        throw new InvalidArgumentError('metadata', 'a JSON-serializable value', metadata);
      }
    }
    let fd: number;
    try {
      fd = fs.openSync(path, overwrite ? APPEND_TRUNCATE : APPEND_NEW, 0o644);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'EEXIST') {
        throw new HistoryFileError('file_exists', path, 'already exists; pass `overwrite: true` to replace it, or choose another path', { cause: error });
      }
      throw new HistoryFileError('open_failed', path, `cannot open for writing: ${messageOf(error)}`, { cause: error });
    }
    const sink = new JsonlHistorySink<S>(path, fd, runId);
    sink.#meta = metaLine;
    sink.#tableGiven = options.table !== undefined;
    if (metaText !== undefined) {
      try {
        sink.#writeLine(metaText);
      } catch (error) {
        sink.close();
        throw error;
      }
    }
    return sink;
  }

  /** Whether `close()` has not been called yet. */
  get isOpen(): boolean {
    return this.#fd !== undefined;
  }

  /** Lines written so far, the meta line included. */
  get linesWritten(): number {
    return this.#lines;
  }

  /**
   * Called by the machine once, with its table. When the meta line describes another table:
   * if the table was the default and nothing but the meta line has been written, the meta
   * line is rewritten for the machine's table; otherwise throws `table_mismatch`, since the
   * file would claim a table its records do not follow. Without a meta line there is nothing
   * to keep in step.
   */
  // Typed for any table, not TransitionTable<S>: a sink opened without a type argument (for
  // the sixteen states) must still be accepted by a machine whose table extends them.
  attach(table: TransitionTable<string>): void {
    const meta = this.#meta;
    if (meta === undefined) return;
    const info = toHistoryTableInfo(table);
    if (sameTable(meta.table, info)) return;
    const fd = this.#fd;
    if (this.#tableGiven || this.#lines !== 1 || fd === undefined) {
      const why = this.#tableGiven
        ? "pass that machine's table as `{ table }` to JsonlHistorySink.open"
        : fd === undefined
          ? 'the sink is already closed'
          : `${this.#lines - 1} line${this.#lines === 2 ? ' was' : 's were'} already written for it; pass the machine's table as \`{ table }\` to JsonlHistorySink.open`;
      throw new HistoryFileError('table_mismatch', this.path, `the sink was opened for ${describeTable(meta.table)} but attached to a machine with ${describeTable(info, meta.table)}; ${why}`);
    }
    const rewritten: HistoryMeta = { ...meta, table: info };
    try {
      // The file holds the meta line alone; the fd appends, so the new line lands at offset 0.
      fs.ftruncateSync(fd, 0);
    } catch (error) {
      throw new HistoryFileError('write_failed', this.path, `cannot rewrite the meta line for the machine's table: ${messageOf(error)}`, { cause: error });
    }
    this.#lines = 0;
    this.#meta = rewritten;
    this.#writeLine(JSON.stringify(rewritten));
  }

  /**
   * Appends one record as one line. Data that JSON cannot represent (a cycle, a BigInt) is
   * replaced by `{ "unserializable": reason }` so the chain of records stays whole, and then
   * `unserializable_data` is thrown so the loss is reported.
   */
  write(record: TransitionRecord<S>): void {
    const { seq, from, to, description, at, durationMs, forced, data } = record;
    let text: string;
    let dataError: unknown;
    try {
      text = JSON.stringify(data === undefined ? { seq, from, to, description, at, durationMs, forced } : { seq, from, to, description, at, durationMs, forced, data });
    } catch (error) {
      dataError = error;
      text = JSON.stringify({ seq, from, to, description, at, durationMs, forced, data: { unserializable: messageOf(error) } });
    }
    this.#writeLine(text);
    this.#lastSeq = seq;
    if (dataError !== undefined) {
      throw new HistoryFileError('unserializable_data', this.path, `the data of record ${seq} cannot be written as JSON (${messageOf(dataError)}); it was written as a placeholder — data was ${describeValue(data)}`, { cause: dataError });
    }
  }

  /** Appends a line for a move the table rejected. */
  rejected(error: IllegalTransitionError<S>): void {
    const { from, to, allowed, description, at } = error.toJSON();
    const line: RejectedMove = { type: 'rejected', from, to, allowed, description, at, seq: this.#lastSeq };
    this.#writeLine(JSON.stringify(line));
  }

  /** Appends a line marking a reset: the next record starts again from the initial state. */
  reset(info: ResetInfo<S>): void {
    const line: ResetMarker = { type: 'reset', from: info.from, at: info.at, seq: info.seq };
    this.#writeLine(JSON.stringify(line));
  }

  /** Closes the file. Calling it again does nothing; writing after it throws `sink_closed`. */
  close(): void {
    const fd = this.#fd;
    if (fd === undefined) return;
    this.#fd = undefined;
    try {
      fs.closeSync(fd);
    } catch (error) {
      throw new HistoryFileError('write_failed', this.path, `cannot close: ${messageOf(error)}`, { cause: error });
    }
  }

  // One write call per line: what the OS has, it has whole (short writes are finished below).
  #writeLine(text: string): void {
    const fd = this.#fd;
    if (fd === undefined) throw new HistoryFileError('sink_closed', this.path, 'the history sink is closed; a line written after close() is lost');
    const bytes = Buffer.from(`${text}\n`, 'utf8');
    try {
      let offset = 0;
      while (offset < bytes.length) offset += fs.writeSync(fd, bytes, offset, bytes.length - offset);
    } catch (error) {
      throw new HistoryFileError('write_failed', this.path, `cannot write line ${this.#lines + 1}: ${messageOf(error)}`, { cause: error });
    }
    this.#lines++;
  }
}

/** Same initial state, states, edges and flags, whatever their order. */
function sameTable(a: HistoryTableInfo, b: HistoryTableInfo): boolean {
  const key = (t: HistoryTableInfo): string =>
    JSON.stringify([t.initial, [...t.states].sort(), t.edges.map((edge) => JSON.stringify(edge)).sort(), [...t.terminal].sort(), [...t.error].sort()]);
  return key(a) === key(b);
}

const DEFAULT_TABLE_INFO = toHistoryTableInfo(DEFAULT_TABLE);

/** A table in a few words; given `other`, also what it adds to or lacks from that one. */
function describeTable(info: HistoryTableInfo, other?: HistoryTableInfo): string {
  if (sameTable(info, DEFAULT_TABLE_INFO)) return 'the sixteen-state table';
  let text = `a table of ${info.states.length} states (initial ${info.initial})`;
  if (other !== undefined) {
    const list = (names: string[]): string => (names.length > 4 ? `${names.slice(0, 4).join(', ')} and ${names.length - 4} more` : names.join(', '));
    const added = info.states.filter((s) => !other.states.includes(s));
    const lacking = other.states.filter((s) => !info.states.includes(s));
    const parts = [...(added.length > 0 ? [`adds ${list(added)}`] : []), ...(lacking.length > 0 ? [`lacks ${list(lacking)}`] : [])];
    text += ` that ${parts.length > 0 ? parts.join(' and ') : 'differs in its edges or flags'}`;
  }
  return text;
}

