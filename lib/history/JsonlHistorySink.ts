// Past 400 lines on purpose: one class whose writes, group commit, durability and rollback of a
// short write all share the file descriptor's state (size, pending lines, the last seq); split,
// each part would need the others' private fields.
import { randomUUID } from 'node:crypto';
import * as fs from 'node:fs';
import type { StateName } from '../../states/StateName';
import { describeValue } from '../internal/describeValue';
import type { HistoryMeta, RejectedMove, ResetMarker } from './HistoryEntry';
import { HistoryFileError } from './HistoryFileError';
import { toHistoryTableInfo, type HistoryTableInfo } from './HistoryTableInfo';
import { storedTable, type StoredTable } from './storedTable';
import type { IllegalTransitionError } from '../machine/IllegalTransitionError';
import { InvalidArgumentError } from '../machine/InvalidArgumentError';
import type { HistorySink, JournalLine, ResetInfo } from '../machine/StateMachine';
import type { TransitionRecord } from '../machine/TransitionRecord';
import type { TransitionTable } from '../machine/TransitionTable';
import { DEFAULT_TABLE } from '../machine/transitions';
import { VERSION } from '../internal/version';
import { messageOf } from '../internal/messageOf';
import { DEFAULT_MAX_LINE_BYTES, overLineLimit } from './maxLineBytes';
import { LineBytes } from './LineBytes';
import { appendRecordLine, placeRecordLine, placed } from './appendRecordLine';

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

const DURABILITIES: readonly HistoryDurability[] = ['none', 'turn', 'move'];

/**
 * Where a line is put together before its write, shared by every sink without group commit:
 * a line is written before the next is begun (writes are synchronous), and a buffer per sink
 * would cost a batch an allocation per run. Each use starts from its start.
 */
const SCRATCH = new LineBytes(64 * 1024);
/** Past this, the scratch buffer is replaced after the line (one huge line must not keep its memory). */
const SCRATCH_KEPT_BYTES = 1024 * 1024;
const NEWLINE = Buffer.from('\n');

/**
 * Group commit's buffers of closed sinks, for the next sinks to take: a batch opens a sink per
 * run, and a buffer each would cost every run an allocation and the collector its memory.
 */
const SPARE: LineBytes[] = [];
const SPARE_KEPT = 64;

function takeLineBytes(): LineBytes {
  return SPARE.pop() ?? new LineBytes(4096);
}

function giveBackLineBytes(bytes: LineBytes): void {
  bytes.length = 0;
  if (SPARE.length < SPARE_KEPT && bytes.buf.length <= 64 * 1024) SPARE.push(bytes);
}

/** After a write from the scratch buffer: one huge line must not keep its memory. */
function shrinkScratch(): void {
  if (SCRATCH.buf.length > SCRATCH_KEPT_BYTES) SCRATCH.buf = Buffer.allocUnsafeSlow(64 * 1024);
}

// O_NOFOLLOW: a symbolic link planted at the path must not redirect the history into the
// file it points to (O_EXCL alone covers new files; this covers `overwrite: true`).
const NO_FOLLOW = fs.constants.O_NOFOLLOW ?? 0;
const APPEND_NEW =
  fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL | fs.constants.O_APPEND | NO_FOLLOW;
const APPEND_TRUNCATE =
  fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_TRUNC | fs.constants.O_APPEND | NO_FOLLOW;

/**
 * A `HistorySink` that writes a JSON Lines file: an optional meta line, then one line per
 * record (exactly the `TransitionRecord` fields), with rejected moves and resets as lines
 * marked by `type`. Each line is one synchronous `write` on a file opened for append, so a
 * crash (even `kill -9`) loses at most the line being written and never damages an earlier
 * one. The data reaches the operating system at once; when it is forced to the disk is the
 * `durability` option (default: when a turn ends, and on close). A write that fails part-way
 * (a full disk) is rolled back to the last complete line, so it loses only the lines it
 * could not store. With the opt-in `groupCommit` option lines wait in memory and are written
 * together (at a turn's end, at a bound, on a timer, on `flush()` and `close()`), so a killed
 * process loses the waiting lines; see `JsonlHistorySinkOptions.groupCommit`.
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
  #durability: HistoryDurability = 'turn';
  /** Lines were written since the last fsync: close() forces them, and only then (one fsync per run, not two). */
  #unsynced = false;
  /** The table's terminal states: reaching one ends a turn, when `'turn'` durability syncs. */
  #terminal: ReadonlySet<string> = new Set<string>();
  /** The table the meta line describes: a machine attached with this very table needs no comparison. */
  #table: TransitionTable<string> | undefined;
  /** Bytes of complete lines in the file: a short write is cut back to this. */
  #size = 0;
  /** A short write could not be cut back: the next line must start on a new line. */
  #broken = false;
  /** Group commit: the bound on waiting lines, or 0 when off (one write per line). */
  #maxLines = 0;
  #maxDelayMs = 0;
  /** Group commit: the lines waiting for the next write, each ending in a newline (made at the first). */
  #pending: LineBytes | undefined;
  #pendingLines = 0;
  #timer: NodeJS.Timeout | undefined;
  /** A timed flush failed: thrown by the next write, flush or close. */
  #deferredError: unknown;
  /** The longest line written; see `JsonlHistorySinkOptions.maxLineBytes`. */
  #maxLineBytes = DEFAULT_MAX_LINE_BYTES;

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
    if (typeof options !== 'object' || options === null)
      throw new InvalidArgumentError('options', 'an object', options);
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
    const metaLine: HistoryMeta | undefined = meta
      ? metadata === undefined
        ? { type: 'meta', version: VERSION, runId, startedAt, table: stored.info }
        : { type: 'meta', version: VERSION, runId, startedAt, table: stored.info, metadata }
      : undefined;
    // Serialize before creating the file, so bad metadata leaves no empty file behind. The line
    // is JSON.stringify(metaLine), put together from parts as bytes: the table's, most of the
    // line, are made once per table (see storedTable), not once per file.
    let metaBytes: LineBytes | undefined;
    if (metaLine !== undefined) {
      // Into the scratch buffer (no code of a caller's runs between here and the write below).
      let metadataText: string | undefined;
      try {
        metadataText = metadata === undefined ? undefined : JSON.stringify(metadata);
      } catch {
        throw new InvalidArgumentError('metadata', 'a JSON-serializable value', metadata);
      }
      const head = JSON.stringify({ type: 'meta', version: VERSION, runId, startedAt });
      metaBytes = SCRATCH;
      metaBytes.length = 0;
      metaBytes.text(head.slice(0, -1));
      metaBytes.bytes(stored.tableBytes);
      if (metadataText !== undefined) metaBytes.text(`,"metadata":${metadataText}`);
      metaBytes.text('}\n');
      if (metaBytes.length > maxLineBytes)
        throw new InvalidArgumentError(
          'metadata',
          `a value whose meta line fits in maxLineBytes (${maxLineBytes.toLocaleString('en-US')} bytes, what readers take)`,
          metadata,
        );
    }
    let fd: number;
    try {
      fd = fs.openSync(path, overwrite ? APPEND_TRUNCATE : APPEND_NEW, 0o644);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'EEXIST') {
        throw new HistoryFileError(
          'file_exists',
          path,
          'already exists; pass `overwrite: true` to replace it, or choose another path',
          { cause: error },
        );
      }
      if ((error as NodeJS.ErrnoException).code === 'ELOOP') {
        throw new HistoryFileError(
          'open_failed',
          path,
          'is a symbolic link; a history file is never written through one (remove it, or choose another path)',
          { cause: error },
        );
      }
      throw new HistoryFileError('open_failed', path, `cannot open for writing: ${messageOf(error)}`, { cause: error });
    }
    const sink = new JsonlHistorySink<S>(path, fd, runId);
    sink.#durability = durability;
    sink.#maxLineBytes = maxLineBytes;
    sink.#maxLines = group.maxLines;
    sink.#maxDelayMs = group.maxDelayMs;
    sink.#terminal = stored.terminal;
    sink.#table = table;
    sink.#meta = metaLine;
    sink.#tableGiven = options.table !== undefined;
    if (metaBytes !== undefined) {
      try {
        // At once even with group commit: the file names its run from the start.
        sink.#writeBytes(metaBytes.buf, 0, metaBytes.length, 1, durability === 'move');
      } catch (error) {
        sink.close();
        throw error;
      } finally {
        shrinkScratch();
      }
    }
    return sink;
  }

  /** Whether `close()` has not been called yet. */
  get isOpen(): boolean {
    return this.#fd !== undefined;
  }

  /** Lines written to the file so far, the meta line included (with group commit, not those still waiting). */
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
    if (meta === undefined || table === this.#table) return;
    const { info, terminal } = storedTable(table, false);
    if (sameTable(meta.table, info)) return;
    const fd = this.#fd;
    if (this.#tableGiven || this.#lines !== 1 || fd === undefined) {
      const why = this.#tableGiven
        ? "pass that machine's table as `{ table }` to JsonlHistorySink.open"
        : fd === undefined
          ? 'the sink is already closed'
          : `${this.#lines - 1} line${this.#lines === 2 ? ' was' : 's were'} already written for it; pass the machine's table as \`{ table }\` to JsonlHistorySink.open`;
      throw new HistoryFileError(
        'table_mismatch',
        this.path,
        `the sink was opened for ${describeTable(meta.table)} but attached to a machine with ${describeTable(info, meta.table)}; ${why}`,
      );
    }
    const rewritten: HistoryMeta = { ...meta, table: info };
    try {
      // The file holds the meta line alone; the fd appends, so the new line lands at offset 0.
      fs.ftruncateSync(fd, 0);
    } catch (error) {
      throw new HistoryFileError(
        'write_failed',
        this.path,
        `cannot rewrite the meta line for the machine's table: ${messageOf(error)}`,
        { cause: error },
      );
    }
    this.#lines = 0;
    this.#size = 0;
    this.#broken = false;
    this.#meta = rewritten;
    this.#terminal = terminal;
    this.#table = table;
    this.#writeNow(`${JSON.stringify(rewritten)}\n`, this.#durability === 'move');
  }

  /**
   * Appends one record as one line. Data that JSON cannot represent (a cycle, a BigInt) is
   * replaced by `{ "unserializable": reason }` so the chain of records stays whole, and then
   * `unserializable_data` is thrown so the loss is reported.
   */
  write(record: TransitionRecord<S>): void {
    if (this.#fd === undefined) throw this.#closedError();
    const { data } = record;
    let dataText: string | undefined;
    let dataError: unknown;
    if (data !== undefined) {
      try {
        dataText = JSON.stringify(data);
      } catch (error) {
        dataError = error;
        dataText = JSON.stringify({ unserializable: messageOf(error) });
      }
    }
    const group = this.#maxLines > 0;
    if (group) this.#throwDeferred();
    else if (placeRecordLine(record, dataText, this.#broken)) {
      // The usual line, put together around its move's remembered middle.
      const { buf, start, end } = placed;
      if (end - start - (this.#broken ? 1 : 0) <= this.#maxLineBytes) {
        this.#writeBytes(buf, start, end - start, 1, this.#syncsAfter(record.to));
        this.#lastSeq = record.seq;
        if (dataError !== undefined) throw this.#unserializable(record.seq, data, dataError);
        return;
      }
    }
    // The line is put together as bytes (see LineBytes): in the waiting lines with group
    // commit, else from the start of the shared scratch buffer.
    const out = group ? (this.#pending ??= takeLineBytes()) : SCRATCH;
    const { seq, from, to } = record;
    let tooLong: string | undefined;
    const start = appendRecordLine(out, record, dataText, !group && this.#broken, !group);
    if (out.length - start > this.#maxLineBytes) {
      // What the readers would refuse is not written: the content goes, the move stays.
      const why = `the record was ${(out.length - start).toLocaleString('en-US')} bytes, over the ${this.#maxLineBytes.toLocaleString('en-US')}-byte line limit readers take`;
      if (group) out.length = start;
      const { description, at, durationMs, forced } = record;
      const short = cut(
        typeof description === 'string' ? description : String(description),
        cutChars(this.#maxLineBytes),
      );
      const line = `{"seq":${jsonValue(seq)},"from":${jsonValue(from)},"to":${jsonValue(to)},"description":${JSON.stringify(short)},"at":${jsonValue(at)},"durationMs":${jsonValue(durationMs)},"forced":${forced === true}${data === undefined ? '' : `,"data":${JSON.stringify(dataPlaceholder(data, `data dropped: ${why}`, Math.floor(this.#maxLineBytes / 8)))}`}}\n`;
      // Made before it is appended: making it may run a caller's code (a toJSON) that writes.
      if (!group) out.length = 0;
      out.text(group || !this.#broken ? line : `\n${line}`);
      tooLong = `record ${seq} (${String(from)} -> ${String(to)}) is too long to write: ${why}; it was written with its data replaced by a placeholder${short === description ? '' : ' and its description cut'}`;
    }
    if (group) this.#added(to);
    else {
      this.#writeBytes(out.buf, 0, out.length, 1, this.#syncsAfter(to));
      shrinkScratch();
    }
    this.#lastSeq = seq;
    if (tooLong !== undefined) throw new HistoryFileError('line_too_long', this.path, tooLong);
    if (dataError !== undefined) throw this.#unserializable(seq, data, dataError);
  }

  /** Whether a record's line moving to `to` is forced to the disk when written (one write per line). */
  #syncsAfter(to: string): boolean {
    return this.#durability === 'move' || (this.#durability === 'turn' && this.#terminal.has(to));
  }

  #unserializable(seq: number, data: unknown, error: unknown): HistoryFileError {
    return new HistoryFileError(
      'unserializable_data',
      this.path,
      `the data of record ${seq} cannot be written as JSON (${messageOf(error)}); it was written as a placeholder — data was ${describeValue(data)}`,
      { cause: error },
    );
  }

  /** Appends a line for a move the table rejected. */
  /**
   * Appends a journal line (an adapter's record of an LLM attempt or a tool call) marked by
   * its `type`, with `seq` the last record written before it, so readers place it in the run.
   * Content JSON cannot represent is written as a placeholder, then `unserializable_data` is
   * thrown, as for a record's data. A `reserve` line (the money ledger's write-ahead record of
   * an LLM call) is on the disk when this returns, whatever `durability` and group commit say:
   * the lines waiting before it and it are written in one write and fsync'ed.
   */
  journal(entry: JournalLine): void {
    const { type, ...rest } = entry as JournalLine & Record<string, unknown>;
    let text: string;
    let failure: unknown;
    try {
      text = JSON.stringify({ type, seq: this.#lastSeq, ...rest });
    } catch (error) {
      failure = error;
      text = JSON.stringify({ type, seq: this.#lastSeq, unserializable: messageOf(error) });
    }
    let tooLong: string | undefined;
    if (overLineLimit(text, this.#maxLineBytes - 1)) {
      const why = `the line was ${Buffer.byteLength(text, 'utf8').toLocaleString('en-US')} bytes, over the ${this.#maxLineBytes.toLocaleString('en-US')}-byte line limit readers take`;
      text = JSON.stringify(
        journalPlaceholder({ type, seq: this.#lastSeq, ...rest }, why, cutChars(this.#maxLineBytes)),
      );
      tooLong = `a ${String(type)} journal line after record ${this.#lastSeq} is too long to write: ${why}; it was written with its content replaced by a placeholder`;
    }
    if (type === 'reserve') this.#writeDurable(`${text}\n`);
    else this.#writeLine(`${text}\n`);
    if (tooLong !== undefined) throw new HistoryFileError('line_too_long', this.path, tooLong);
    if (failure !== undefined) {
      throw new HistoryFileError(
        'unserializable_data',
        this.path,
        `a ${String(type)} journal line after record ${this.#lastSeq} cannot be written as JSON (${messageOf(failure)}); it was written as a placeholder`,
        { cause: failure },
      );
    }
  }

  rejected(error: IllegalTransitionError<S>): void {
    const { from, to, allowed, description, at } = error.toJSON();
    const line: RejectedMove = {
      type: 'rejected',
      from,
      to,
      allowed,
      description: cut(description),
      at,
      seq: this.#lastSeq,
    };
    this.#writeLine(`${JSON.stringify(line)}\n`);
  }

  /** Appends a line marking a reset: the next record starts again from the initial state. */
  reset(info: ResetInfo<S>): void {
    const line: ResetMarker = { type: 'reset', from: info.from, at: info.at, seq: info.seq };
    this.#writeLine(`${JSON.stringify(line)}\n`);
  }

  /** Closes the file. Calling it again does nothing; writing after it throws `sink_closed`. */
  close(): void {
    const fd = this.#fd;
    if (fd === undefined) return;
    let failure: unknown = this.#deferredError;
    this.#deferredError = undefined;
    try {
      this.#flushPending(false);
    } catch (error) {
      failure ??= error;
    }
    if (this.#pending !== undefined) giveBackLineBytes(this.#pending);
    this.#pending = undefined;
    this.#fd = undefined;
    try {
      if (this.#durability !== 'none' && this.#unsynced) syncFile(fd);
    } catch (error) {
      failure ??= error;
    }
    try {
      fs.closeSync(fd);
    } catch (error) {
      failure ??= error;
    }
    if (failure instanceof HistoryFileError) throw failure;
    if (failure !== undefined)
      throw new HistoryFileError('write_failed', this.path, `cannot close: ${messageOf(failure)}`, { cause: failure });
  }

  /** Lines waiting for the next write (group commit); always 0 without it. */
  get pendingLines(): number {
    return this.#pendingLines;
  }

  /**
   * Group commit: writes the waiting lines now, in one write (fsync'ed unless durability is
   * `'none'`), and throws the failure of an earlier timed flush. Without group commit there
   * is nothing waiting and it does nothing.
   */
  flush(): void {
    this.#throwDeferred();
    this.#flushPending(this.#durability !== 'none');
  }

  // One write call per line: what the OS has, it has whole (short writes are finished below).
  // A write that fails part-way (a full disk) is cut back to the last complete line, so the
  // next line is not glued to half of this one; if even that fails, the next line starts
  // with a newline, so only the half line is lost. `line` (a journal line, a rejected move, a
  // reset) ends in its newline; records go through `write`.
  #writeLine(line: string): void {
    if (this.#fd === undefined) throw this.#closedError();
    if (this.#maxLines > 0) {
      this.#throwDeferred();
      (this.#pending ??= takeLineBytes()).text(line);
      this.#added(undefined);
      return;
    }
    this.#writeNow(line, this.#durability === 'move');
  }

  /**
   * Group commit: a line was added to the waiting ones. They are written when it ends a turn
   * (moves to `to`, a terminal state) or reaches the bound; else the timer makes sure they are.
   */
  #added(to: string | undefined): void {
    this.#pendingLines++;
    const endsTurn = to !== undefined && this.#terminal.has(to);
    if (endsTurn || this.#pendingLines >= this.#maxLines)
      this.#flushPending(this.#durability === 'move' || (endsTurn && this.#durability === 'turn'));
    else if (this.#timer === undefined) this.#startTimer();
  }

  /** Writes the waiting lines and `line` now, in one write, and forces them to the disk. */
  #writeDurable(line: string): void {
    if (this.#fd === undefined) throw this.#closedError();
    if (this.#maxLines > 0) {
      this.#throwDeferred();
      (this.#pending ??= takeLineBytes()).text(line);
      this.#pendingLines++;
      this.#flushPending(true);
      return;
    }
    this.#writeNow(line, true);
  }

  #closedError(): HistoryFileError {
    return new HistoryFileError(
      'sink_closed',
      this.path,
      'the history sink is closed; a line written after close() is lost',
    );
  }

  /** Writes one line now, in one write, after a newline when the file's last line was left cut. */
  #writeNow(line: string, sync: boolean): void {
    const out = SCRATCH;
    out.length = 0;
    try {
      if (this.#broken) out.text('\n');
      out.text(line);
      this.#writeBytes(out.buf, 0, out.length, 1, sync);
    } finally {
      shrinkScratch();
    }
  }

  /**
   * Writes `lines` complete lines, the `length` bytes of `bytes` from `start`, as one write; on
   * a short write, writes the rest, and on a failure cuts the file back to before them.
   */
  #writeBytes(bytes: Uint8Array, start: number, length: number, lines: number, sync: boolean): void {
    const fd = this.#fd!;
    let offset = 0;
    try {
      do offset += fs.writeSync(fd, bytes, start + offset, length - offset);
      while (offset < length);
      if (sync) syncFile(fd);
      this.#unsynced = !sync;
    } catch (error) {
      if (offset < length) {
        this.#rollBack(fd, offset);
        const what =
          lines === 1
            ? `line ${this.#lines + 1}`
            : `lines ${this.#lines + 1}–${this.#lines + lines} (one batched write; none of them was kept)`;
        throw new HistoryFileError('write_failed', this.path, `cannot write ${what}: ${messageOf(error)}`, {
          cause: error,
        });
      }
      // The lines are in the file; only forcing them to the disk failed.
      this.#size += length;
      this.#broken = false;
      this.#lines += lines;
      throw new HistoryFileError(
        'write_failed',
        this.path,
        `line ${this.#lines} was written but could not be forced to the disk: ${messageOf(error)}`,
        { cause: error },
      );
    }
    this.#size += length;
    this.#broken = false;
    this.#lines += lines;
  }

  #flushPending(sync: boolean): void {
    this.#clearTimer();
    if (this.#pendingLines === 0) return;
    const pending = this.#pending!;
    const lines = this.#pendingLines;
    const length = pending.length;
    pending.length = 0;
    this.#pendingLines = 0;
    // One huge batch must not keep its memory for the rest of the run.
    if (pending.buf.length > SCRATCH_KEPT_BYTES) this.#pending = undefined;
    if (this.#broken)
      this.#writeBytes(Buffer.concat([NEWLINE, pending.buf.subarray(0, length)]), 0, length + 1, lines, sync);
    else this.#writeBytes(pending.buf, 0, length, lines, sync);
  }

  #startTimer(): void {
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      try {
        this.#flushPending(this.#durability === 'move');
      } catch (error) {
        this.#deferredError ??= error;
      }
    }, this.#maxDelayMs);
    // A waiting line must not keep the process alive; close() writes it.
    this.#timer.unref();
  }

  #clearTimer(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  #throwDeferred(): void {
    const error = this.#deferredError;
    if (error === undefined) return;
    this.#deferredError = undefined;
    throw error;
  }

  #rollBack(fd: number, written: number): void {
    if (written === 0) return;
    try {
      fs.ftruncateSync(fd, this.#size);
    } catch {
      this.#size += written;
      this.#broken = true;
    }
  }
}

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

/**
 * A record's data too large to write: its small top-level fields (an outcome, the usage, a
 * turn, a limit: what readers count; at most 32, each under 1,024 characters of JSON, an
 * eighth of the line limit in all) and a
 * `dropped` note saying why the rest is gone.
 */
function dataPlaceholder(data: unknown, why: string, budget: number): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  // Characters of JSON kept in all: at most 3 bytes each, well under the line's limit.
  let left = budget;
  if (typeof data === 'object' && data !== null && !Array.isArray(data)) {
    let kept = 0;
    for (const key in data) {
      if (kept === 32 || key === 'dropped' || key.length > 64) continue;
      let json: string | undefined;
      try {
        json = JSON.stringify((data as Record<string, unknown>)[key]);
      } catch {
        continue;
      }
      if (json === undefined || json.length > 1024 || json.length + key.length > left) continue;
      out[key] = JSON.parse(json) as unknown;
      left -= json.length + key.length;
      kept++;
    }
  }
  out['dropped'] = why;
  return out;
}

/**
 * A text kept in a line whose content had to be dropped, cut to `chars` (at most 3 bytes
 * each), marked when it was.
 */
function cut(text: string, chars = 4096): string {
  if (text.length <= chars) return text;
  // Never split a surrogate pair.
  const end = chars > 0 && /[\ud800-\udbff]/.test(text[chars - 1]!) ? chars - 1 : chars;
  return `${text.slice(0, end)}… [${(text.length - end).toLocaleString('en-US')} more characters dropped]`;
}

/** How many characters of a text a line cut for `maxLineBytes` keeps: a small share of it. */
function cutChars(maxLineBytes: number): number {
  return Math.min(4096, Math.floor(maxLineBytes / 32));
}

const KNOWN_JOURNAL_FIELDS = [
  'type',
  'seq',
  'turn',
  'operation',
  'attempt',
  'startedAt',
  'endedAt',
  'status',
  'costUsd',
  'maxCostUsd',
];

/**
 * A journal line too long to write, without its content: the fields readers check and count
 * (kind, seq, turn, times, operation, attempt, the call's id and name, status, cost, the
 * error's name and message, cut) and a `dropped` note saying why.
 */
function journalPlaceholder(line: Record<string, unknown>, why: string, chars: number): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  // A few fields at most: every string is cut, and a line with many is cut to the known ones.
  const keys = Object.keys(line);
  for (const key of keys.length > 16 ? KNOWN_JOURNAL_FIELDS.filter((k) => k in line) : keys) {
    const value = line[key];
    if (typeof value === 'number' || typeof value === 'boolean') out[cut(key, 64)] = value;
    else if (typeof value === 'string') out[cut(key, 64)] = cut(value, chars);
  }
  const call = line['call'] as Record<string, unknown> | undefined;
  if (typeof call === 'object' && call !== null)
    out['call'] = { id: cut(String(call['id']), chars), name: cut(String(call['name']), chars) };
  const error = line['error'] as Record<string, unknown> | undefined;
  if (typeof error === 'object' && error !== null)
    out['error'] = { name: cut(String(error['name']), chars), message: cut(String(error['message']), chars) };
  out['dropped'] = `content dropped: ${why}`;
  return out;
}

/** A number, string or boolean as JSON; a non-finite number as `null`, as JSON.stringify writes it. */
function jsonValue(value: unknown): string {
  if (typeof value === 'number') return Number.isFinite(value) ? String(value) : 'null';
  return JSON.stringify(value) ?? 'null';
}

/** fsync, where the file can be synced: a device or a pipe (EINVAL) has nothing to force to a disk. */
function syncFile(fd: number): void {
  try {
    fs.fsyncSync(fd);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== 'EINVAL' && code !== 'ENOTSUP') throw error;
  }
}

/** Same initial state, states, edges and flags, whatever their order. */
function sameTable(a: HistoryTableInfo, b: HistoryTableInfo): boolean {
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
function describeTable(info: HistoryTableInfo, other?: HistoryTableInfo): string {
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
