// One class whose writes, group commit, durability and rollback of a short write share the
// file descriptor's state (size, pending lines, the last seq); what needs none of it (options,
// buffers, placeholders, opening, the meta line) lives in files of its own.
import * as fs from 'node:fs';
import type { StateName } from '../../states/StateName';
import { describeValue } from '../internal/describeValue';
import type { HistoryMeta, RejectedMove, ResetMarker } from './HistoryEntry';
import { HistoryFileError } from './HistoryFileError';
import { storedTable } from './storedTable';
import type { IllegalTransitionError } from '../machine/IllegalTransitionError';
import { InvalidArgumentError } from '../machine/InvalidArgumentError';
import type { HistorySink, JournalLine, ResetInfo } from '../machine/StateMachine';
import type { TransitionRecord } from '../machine/TransitionRecord';
import type { TransitionTable } from '../machine/TransitionTable';
import { VERSION } from '../internal/version';
import { messageOf } from '../internal/messageOf';
import { DEFAULT_MAX_LINE_BYTES } from './maxLineBytes';
import type { LineBytes } from './LineBytes';
import { resolveSinkOptions, type HistoryDurability, type JsonlHistorySinkOptions } from './JsonlHistorySinkOptions';
import { NEWLINE, SCRATCH, SCRATCH_KEPT_BYTES, giveBackLineBytes, shrinkScratch, takeLineBytes } from './lineBytesPool';
import { cut, journalLineText, recordPlaceholderLine } from './linePlaceholders';
import { openAppendFile } from './openAppendFile';
import { metaLineBytes } from './metaLineBytes';
import { syncFile } from './syncFile';
import { sameTable, tableMismatch } from './describeTable';
import { appendRecordLine, placeRecordLine, placed } from './appendRecordLine';

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
    const { runId, table, metadata, meta, overwrite, startedAt, durability, maxLineBytes, group, stored } =
      resolveSinkOptions(options);
    const metaLine: HistoryMeta | undefined = meta
      ? metadata === undefined
        ? { type: 'meta', version: VERSION, runId, startedAt, table: stored.info }
        : { type: 'meta', version: VERSION, runId, startedAt, table: stored.info, metadata }
      : undefined;
    // Serialize before creating the file, so bad metadata leaves no empty file behind.
    const metaBytes =
      metaLine === undefined ? undefined : metaLineBytes(SCRATCH, { runId, startedAt, metadata }, stored, maxLineBytes);
    const fd = openAppendFile(path, overwrite);
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

  /** When the run started, as the meta line says; undefined without one. */
  get startedAt(): number | undefined {
    return this.#meta?.startedAt;
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
      throw tableMismatch(this.path, meta.table, info, this.#tableGiven, fd === undefined, this.#lines - 1);
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
      const { line, short } = recordPlaceholderLine(record, why, this.#maxLineBytes);
      // Made before it is appended: making it may run a caller's code (a toJSON) that writes.
      if (!group) out.length = 0;
      out.text(group || !this.#broken ? line : `\n${line}`);
      tooLong = `record ${seq} (${String(from)} -> ${String(to)}) is too long to write: ${why}; it was written with its data replaced by a placeholder${short === record.description ? '' : ' and its description cut'}`;
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

  /**
   * Appends a journal line (an adapter's record of an LLM attempt or a tool call) marked by
   * its `type`, with `seq` the last record written before it, so readers place it in the run.
   * Content JSON cannot represent is written as a placeholder, then `unserializable_data` is
   * thrown, as for a record's data. A `reserve` line (the money ledger's write-ahead record of
   * an LLM call) and an `approval` line (a person's answer, before the tool runs) are on disk
   * when this returns, whatever `durability` says: written with the lines before, and fsync'ed.
   */
  journal(entry: JournalLine): void {
    const type = entry.type;
    const { text, tooLong, failure } = journalLineText(entry, this.#lastSeq, this.#maxLineBytes);
    if (type === 'reserve' || type === 'approval') this.#writeDurable(`${text}\n`);
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
