// The file sink's lines, for a store that keeps them elsewhere (a database): the same JSON, the
// same durability modes, with the store's commits in place of write(2) and fsync.
import type { RejectedMove, ResetMarker } from './HistoryEntry';
import { HistoryFileError } from './HistoryFileError';
import type { IllegalTransitionError } from '../machine/IllegalTransitionError';
import type { HistorySink, JournalLine, ResetInfo } from '../machine/StateMachine';
import type { TransitionRecord } from '../machine/TransitionRecord';
import { messageOf } from '../internal/messageOf';
import { LineBytes } from './LineBytes';
import { resolveSinkOptions, type HistoryDurability, type JsonlHistorySinkOptions } from './JsonlHistorySinkOptions';
import { cut, journalLineText, recordPlaceholderLine } from './linePlaceholders';
import { metaLineBytes } from './metaLineBytes';
import { appendRecordLine } from './appendRecordLine';
import { ignore } from '../internal/ignore';

/**
 * Where a `RunLinesSink` keeps a run's lines: a store's writer for one run. Each `append` is
 * one commit of its lines, after those of the calls before it (the sink calls it again only
 * once the last one settled).
 */
export interface RunLineWriter {
  /**
   * Keeps `lines` (each one history line's JSON, without a newline) after the run's earlier
   * lines, as one commit. `durable`: it resolves only once the store has them on its disk (a
   * synchronous commit); otherwise once the store has them (they may be lost with the
   * store's own crash, as a file's lines not yet fsync'ed are with the machine's).
   */
  append(lines: readonly string[], durable: boolean): Promise<void>;
  /** The run's last line is kept: the store records what it needs of the run (its outcome). */
  end(): Promise<void>;
}

/**
 * A `HistorySink` that writes a run's history as the lines of a `JsonlHistorySink`'s file
 * (the same JSON, line for line), handed to a store's `RunLineWriter`. The durability modes
 * keep their meaning: `'move'` commits each line durably, `'turn'` each line as it comes and
 * durably at a turn's end, `'none'` never waits for the disk; with `groupCommit` lines wait and
 * go as one commit at a turn's end, at the bound or on the timer. A `reserve` line (the money
 * ledger's) and the lines before it are committed durably whatever the mode, and `journal`
 * returns that commit: the adapter awaits it before the call, and makes no call when it fails.
 *
 * Commits run one after the other, in order. The first that fails stops the sink: the lines
 * after it are not written (a gap would read as a whole run), the next write throws the
 * failure (the machine reports it as `sinkError`), a later `reserve` rejects, and `close()`
 * rejects with it.
 */
export class RunLinesSink implements HistorySink<string> {
  /** Where the run is kept, as the store names it (in messages, and a batch report's `historyFile`). */
  readonly path: string;
  readonly runId: string;
  readonly #writer: RunLineWriter;
  readonly #durability: HistoryDurability;
  readonly #terminal: ReadonlySet<string>;
  readonly #maxLineBytes: number;
  readonly #maxLines: number;
  readonly #maxDelayMs: number;
  #pending: string[] = [];
  #timer: NodeJS.Timeout | undefined;
  /** The last commit asked for: the next waits for it. */
  #tail: Promise<void> = Promise.resolve();
  #failure: unknown;
  #failureThrown = false;
  #lastSeq = 0;
  #open = true;

  private constructor(path: string, writer: RunLineWriter, options: JsonlHistorySinkOptions) {
    const { runId, durability, maxLineBytes, group, stored } = resolveSinkOptions(options);
    this.path = path;
    this.runId = runId;
    this.#writer = writer;
    this.#durability = durability;
    this.#terminal = stored.terminal;
    this.#maxLineBytes = maxLineBytes;
    this.#maxLines = group.maxLines;
    this.#maxDelayMs = group.maxDelayMs;
  }

  /**
   * Makes the sink and commits its meta line (as `JsonlHistorySink.open` writes it), before
   * any move: the store names the run from the start. Rejects with the commit's failure.
   */
  static async open(path: string, writer: RunLineWriter, options: JsonlHistorySinkOptions = {}): Promise<RunLinesSink> {
    const sink = new RunLinesSink(path, writer, options);
    const { runId, startedAt, metadata, meta, maxLineBytes, stored } = resolveSinkOptions(options);
    if (meta) {
      const bytes = metaLineBytes(new LineBytes(1024), { runId, startedAt, metadata }, stored, maxLineBytes);
      const line = bytes.buf.toString('utf8', 0, bytes.length - 1);
      await sink.#commit([line], sink.#durability === 'move');
    }
    return sink;
  }

  /** Whether `close()` has not been called yet. */
  get isOpen(): boolean {
    return this.#open;
  }

  write(record: TransitionRecord<string>): void {
    this.#assertWritable();
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
    const out = new LineBytes(256);
    appendRecordLine(out, record, dataText, false, true);
    let line: string;
    let tooLong: string | undefined;
    if (out.length > this.#maxLineBytes) {
      const why = `the record was ${out.length.toLocaleString('en-US')} bytes, over the ${this.#maxLineBytes.toLocaleString('en-US')}-byte line limit readers take`;
      line = recordPlaceholderLine(record, why, this.#maxLineBytes).line.slice(0, -1);
      tooLong = `record ${record.seq} (${String(record.from)} -> ${String(record.to)}) is too long to write: ${why}; it was written with its data replaced by a placeholder`;
    } else line = out.buf.toString('utf8', 0, out.length - 1);
    this.#lastSeq = record.seq;
    const endsTurn = this.#terminal.has(record.to);
    this.#add(line, endsTurn, this.#durability === 'move' || (this.#durability === 'turn' && endsTurn));
    if (tooLong !== undefined) throw new HistoryFileError('line_too_long', this.path, tooLong);
    if (dataError !== undefined)
      throw new HistoryFileError(
        'unserializable_data',
        this.path,
        `the data of record ${record.seq} cannot be written as JSON (${messageOf(dataError)}); it was written as a placeholder`,
        { cause: dataError },
      );
  }

  /**
   * Writes a journal line. A `reserve` line (or an `approval` one) is committed durably with the
   * lines before it, and its commit is returned, to be awaited before the call it reserves (the
   * tool it answers).
   */
  journal(entry: JournalLine): Promise<void> | undefined {
    const durable = entry.type === 'reserve' || entry.type === 'approval';
    if (durable && (!this.#open || this.#failure !== undefined))
      return Promise.reject(this.#failure ?? this.#closedError());
    this.#assertWritable();
    const { text, tooLong, failure } = journalLineText(entry, this.#lastSeq, this.#maxLineBytes);
    let commit: Promise<void> | undefined;
    if (durable) {
      this.#pending.push(text);
      commit = this.#flush(true);
    } else this.#add(text, false, this.#durability === 'move');
    if (tooLong !== undefined) throw new HistoryFileError('line_too_long', this.path, tooLong);
    if (failure !== undefined)
      throw new HistoryFileError(
        'unserializable_data',
        this.path,
        `a ${String(entry.type)} journal line after record ${this.#lastSeq} cannot be written as JSON (${messageOf(failure)}); it was written as a placeholder`,
        { cause: failure },
      );
    return commit;
  }

  rejected(error: IllegalTransitionError<string>): void {
    this.#assertWritable();
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
    this.#add(JSON.stringify(line), false, this.#durability === 'move');
  }

  reset(info: ResetInfo<string>): void {
    this.#assertWritable();
    const line: ResetMarker = { type: 'reset', from: info.from, at: info.at, seq: info.seq };
    this.#add(JSON.stringify(line), false, this.#durability === 'move');
  }

  /** Commits the waiting lines (group commit) and waits for every commit asked for so far. */
  async flush(): Promise<void> {
    await this.#flush(this.#durability !== 'none');
    this.#throwFailure();
  }

  /**
   * Commits what waits (durably, unless `'none'`), then tells the store the run's lines are all
   * there. Rejects with the first failure of any commit. Calling it again does nothing.
   */
  async close(): Promise<void> {
    if (!this.#open) return;
    this.#open = false;
    await this.#flush(this.#durability !== 'none');
    if (this.#failure !== undefined) throw this.#failure;
    await this.#writer.end();
  }

  /** A line to keep: at once (its own commit), or, with group commit, with the waiting ones. */
  #add(line: string, endsTurn: boolean, durable: boolean): void {
    this.#pending.push(line);
    // Its failure is kept (#failure) and thrown by the next write: not left unhandled here.
    if (this.#maxLines === 0 || endsTurn || this.#pending.length >= this.#maxLines) this.#flush(durable).catch(ignore);
    else if (this.#timer === undefined) {
      this.#timer = setTimeout(() => {
        this.#timer = undefined;
        this.#flush(this.#durability === 'move').catch(ignore);
      }, this.#maxDelayMs);
      // A waiting line must not keep the process alive; close() commits it.
      this.#timer.unref();
    }
  }

  /** Commits the waiting lines after the commits before; resolves once they are kept, rejects with the first failure. */
  #flush(durable: boolean): Promise<void> {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    if (this.#pending.length === 0) return this.#tail;
    const lines = this.#pending;
    this.#pending = [];
    return this.#commit(lines, durable);
  }

  #commit(lines: readonly string[], durable: boolean): Promise<void> {
    const commit = this.#tail.then(() => {
      if (this.#failure !== undefined) throw this.#failure;
      return this.#writer.append(lines, durable).catch((error: unknown) => {
        this.#failure ??= new HistoryFileError(
          'write_failed',
          this.path,
          `cannot keep ${lines.length === 1 ? 'a line' : `${lines.length} lines`}: ${messageOf(error)}`,
          { cause: error },
        );
        throw this.#failure;
      });
    });
    // The chain goes on past a failure (the next commits see it); the failure is the caller's.
    this.#tail = commit.catch(() => undefined);
    return commit;
  }

  #assertWritable(): void {
    if (!this.#open) throw this.#closedError();
    this.#throwFailure();
  }

  /** The first failure, thrown once by the next write (reported as `sinkError`); close() throws it again. */
  #throwFailure(): void {
    if (this.#failure === undefined || this.#failureThrown) return;
    this.#failureThrown = true;
    throw this.#failure;
  }

  #closedError(): HistoryFileError {
    return new HistoryFileError(
      'sink_closed',
      this.path,
      'the history sink is closed; a line written after close() is lost',
    );
  }
}
