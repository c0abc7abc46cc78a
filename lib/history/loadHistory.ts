// Past 400 lines: the line splitter, the salvage rules and the readers built on them share one
// buffer discipline (readBytes fills the buffers); they are read together when a reader misbehaves.
import type {
  HistoryEntry,
  HistoryMeta,
  HistoryWarning,
  HttpExchangeLine,
  JournalLineRead,
  RejectedMove,
  ResetMarker,
} from './HistoryEntry';
import { HistoryFileError } from './HistoryFileError';
import { linkTarget, unquoted, type BadLine, type ShownLine } from './linkTarget';
import { InvalidArgumentError } from '../machine/InvalidArgumentError';
import { parseHistoryLine } from './parseHistoryLine';
import { RecordLineScanner } from './RecordLineScanner';
import { DEFAULT_MAX_LINE_BYTES } from './maxLineBytes';
import type { TransitionRecord } from '../machine/TransitionRecord';
import type { TransitionTable } from '../machine/TransitionTable';
import { readBytes } from './readBytes';

/** Options of `readHistory` and `loadHistory`: warnings, salvage, the line-length limit, the input. */
export interface ReadHistoryOptions {
  /**
   * Called for what is odd but readable, such as the cut last line a crash leaves or a line
   * skipped by `salvage`. Default: `process.emitWarning`, so a warning is never silent.
   */
  onWarning?: (warning: HistoryWarning) => void;
  /**
   * Skip corrupt lines anywhere in the file (lines glued by a full disk, holes of NUL bytes
   * left by a power cut, cut or overlong lines) with a `skipped_line` warning naming each,
   * and read the rest. Default false: the first corrupt line throws `corrupt_line`.
   */
  salvage?: boolean;
  /**
   * The longest line read, in bytes; a longer one throws `line_too_long` (or is skipped with
   * `salvage`) without being held in memory. Default 64 MiB.
   */
  maxLineBytes?: number;
  /** Read this stream (standard input, a pipe) instead of opening `path`, which then only names it in messages. */
  input?: AsyncIterable<Uint8Array>;
  /**
   * Called after each chunk is taken; a promise it returns is awaited before the next is read,
   * so a reader whose output is slower than the file (a pipe) holds its pace instead of
   * queueing what it writes in memory. `readHistoryInto` only.
   */
  pace?: () => Promise<void> | undefined;
}

export { DEFAULT_MAX_LINE_BYTES } from './maxLineBytes';

/**
 * Reads a JSON Lines history file and yields each line parsed, with its number, holding one
 * chunk at a time: a million-line file is read in flat memory. Accepts files with or without
 * the meta line (which, when present, must be the first). Blank lines are skipped.
 *
 * The last line may be cut (no newline at its end, not valid): a crash mid-write leaves that,
 * so it is skipped with a warning. Any other line that is not a history line throws
 * `HistoryFileError` (`corrupt_line`) naming the file, the line number and the text — or,
 * with `salvage: true`, is skipped with a warning; a missing file throws `not_found`, a line
 * over `maxLineBytes` throws `line_too_long`.
 */
export async function* readHistory(
  path: string,
  options: ReadHistoryOptions = {},
): AsyncGenerator<HistoryEntry, void, undefined> {
  for await (const entries of readHistoryChunks(path, options)) yield* entries;
}

/**
 * `readHistory` a chunk at a time: each step yields the entries of the lines one read
 * completed, so a long file costs one generator step per megabyte rather than per line.
 */
export async function* readHistoryChunks(
  path: string,
  options: ReadHistoryOptions = {},
): AsyncGenerator<HistoryEntry[], void, undefined> {
  let batch: HistoryEntry[] = [];
  const lines = lineSplitter(path, options, (entry) => void batch.push(entry));
  for await (const bytes of readBytes(path, options.input)) {
    lines.push(bytes);
    if (batch.length > 0) {
      yield batch;
      batch = [];
    }
  }
  lines.end();
  if (batch.length > 0) yield batch;
}

/**
 * `readHistory` into a function, called with each entry as soon as its line is read, so no
 * entry outlives its use (an array of a chunk's entries would, and keep the young
 * generation of the heap large). Resolves to the number of entries. `withData: false` is for
 * a reader that never looks at records' `data`: the records the fast path reads have none.
 */
export async function readHistoryInto(
  path: string,
  options: ReadHistoryOptions,
  take: (entry: HistoryEntry) => void,
  { withData = true } = {},
): Promise<number> {
  let count = 0;
  const lines = lineSplitter(
    path,
    options,
    (entry) => {
      count++;
      take(entry);
    },
    withData,
  );
  const { pace } = options;
  if (pace !== undefined && typeof pace !== 'function') throw new InvalidArgumentError('pace', 'a function', pace);
  for await (const bytes of readBytes(path, options.input)) {
    lines.push(bytes);
    const waiting = pace?.();
    if (waiting !== undefined) await waiting;
  }
  lines.end();
  return count;
}

/** Checks the options and makes the splitter for them. */
function lineSplitter(
  path: string,
  options: ReadHistoryOptions,
  take: (entry: HistoryEntry) => void,
  withData = true,
): LineSplitter {
  if (typeof options !== 'object' || options === null) throw new InvalidArgumentError('options', 'an object', options);
  const { onWarning = emitWarning, salvage = false, maxLineBytes = DEFAULT_MAX_LINE_BYTES, input } = options;
  if (typeof onWarning !== 'function') throw new InvalidArgumentError('onWarning', 'a function', onWarning);
  if (!(Number.isSafeInteger(maxLineBytes) && maxLineBytes > 0))
    throw new InvalidArgumentError('maxLineBytes', 'a positive whole number of bytes', maxLineBytes);
  if (input !== undefined && (typeof path !== 'string' || path === ''))
    throw new InvalidArgumentError('path', 'a name for the input', path);
  const link = input === undefined ? linkTarget(path) : undefined;
  return new LineSplitter(path, maxLineBytes, salvage, onWarning, take, new RecordLineScanner(withData), link);
}

/** Splits bytes into lines and parses them; holds the unfinished line's bytes, up to the limit. */
class LineSplitter {
  #number = 0;
  #seenContent = false;
  /** The unfinished line's bytes so far, and how many bytes it has in all (more once over the limit). */
  #parts: Buffer[] = [];
  #lineBytes = 0;
  /** A line that did not parse is held until we know whether it is the last one. */
  #pending: { number: number; text: string; reason: string } | undefined;

  constructor(
    readonly path: string,
    readonly maxLineBytes: number,
    readonly salvage: boolean,
    readonly onWarning: (warning: HistoryWarning) => void,
    /** Called with each entry, in order. */
    readonly take: (entry: HistoryEntry) => void,
    /** The fast path for the sink's record lines; the others are parsed whole. */
    readonly scanner: RecordLineScanner,
    /**
     * The target, when the path is a symbolic link: its bad lines are then never quoted (nor
     * JSON.parse's words, which quote them), as the link may point at any file (a key, a password file).
     */
    readonly link?: string,
  ) {}

  /** Takes the next bytes of the input; keeps a copy of the unfinished line, so the caller may reuse `chunk`. */
  push(chunk: Buffer): void {
    const lastNl = chunk.lastIndexOf(10);
    if (lastNl === -1) {
      this.#append(chunk, 0, chunk.length);
      return;
    }
    let start = 0;
    if (this.#lineBytes > 0) {
      const firstNl = chunk.indexOf(10);
      this.#append(chunk, 0, firstNl);
      this.#finishLine();
      start = firstNl + 1;
    }
    // A line of this chunk can only be over the limit when the limit is under a chunk's size.
    const check = this.maxLineBytes < lastNl - start;
    const limit = lastNl + 1;
    const scanner = this.scanner;
    while (start < limit) {
      // The sink's own record lines are read straight from the bytes; any other line is decoded and parsed whole.
      const entry = scanner.scan(chunk, start, limit, this.#number + 1);
      if (entry !== undefined && !(check && scanner.newline - start > this.maxLineBytes)) {
        this.#number++;
        if (this.#pending !== undefined) this.#rejectPending();
        this.#seenContent = true;
        this.take(entry);
        start = scanner.newline + 1;
        continue;
      }
      const nl = chunk.indexOf(10, start);
      if (check && nl - start > this.maxLineBytes) {
        this.#lineBytes = nl - start;
        if (!this.salvage) this.#tooLong();
        this.#finishLine();
      } else this.#finishText(chunk.toString('utf8', start, nl));
      start = nl + 1;
    }
    if (limit < chunk.length) this.#append(chunk, limit, chunk.length);
  }

  /** The end of the input: the unfinished line, if any, is the file's last line and had no newline. */
  end(): void {
    const cut = this.#lineBytes > 0;
    if (cut) this.#finishLine(true);
    const pending = this.#pending;
    if (pending !== undefined) {
      this.#pending = undefined;
      if (!cut || pending.number !== this.#number) this.#reject(pending);
      else
        this.onWarning({
          code: 'cut_last_line',
          file: this.path,
          line: pending.number,
          message: `${this.path}:${pending.number}: the last line is incomplete (the run was probably killed while writing it) and was skipped`,
        });
    }
  }

  #append(chunk: Buffer, from: number, to: number): void {
    const length = to - from;
    this.#lineBytes += length;
    if (this.#lineBytes > this.maxLineBytes) {
      // Over the limit: the bytes are counted, never kept.
      this.#parts = [];
      if (!this.salvage) this.#tooLong();
      return;
    }
    if (length > 0) {
      // A copy: the chunk's buffer is read into again.
      this.#parts.push(Buffer.from(chunk.subarray(from, to)));
    }
  }

  #tooLong(): never {
    throw new HistoryFileError(
      'line_too_long',
      this.path,
      `line is longer than the limit of ${this.maxLineBytes.toLocaleString('en-US')} bytes (${this.#lineBytes.toLocaleString('en-US')} bytes read so far); raise \`maxLineBytes\`, or read past it with --salvage`,
      { line: this.#number + 1 },
    );
  }

  /** Ends the line held in parts (carried across chunks, or over the limit). */
  #finishLine(last = false): void {
    const size = this.#lineBytes;
    const parts = this.#parts;
    this.#parts = [];
    this.#lineBytes = 0;
    if (size > this.maxLineBytes) {
      const number = ++this.#number;
      this.#skip(
        number,
        `the line is ${size.toLocaleString('en-US')} bytes long, over the limit of ${this.maxLineBytes.toLocaleString('en-US')}`,
      );
      return;
    }
    const bytes = parts.length === 1 ? parts[0]! : Buffer.concat(parts);
    this.#finishText(bytes.toString('utf8'), last);
  }

  #finishText(line: string, last = false): void {
    const number = ++this.#number;
    let text = line;
    if (number === 1 && text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    if (text.charCodeAt(text.length - 1) === 13) text = text.slice(0, -1);
    if (text.trim() === '') return;
    if (this.#pending !== undefined) this.#rejectPending();
    const parsed = parseHistoryLine(text, number);
    if (!parsed.ok) {
      // Only the file's last line may be cut by a crash; a bad line is held until we know.
      if (last) this.#pending = { number, text, reason: parsed.reason };
      else if (this.salvage) this.#skip(number, parsed.reason, text);
      else this.#pending = { number, text, reason: parsed.reason };
      return;
    }
    if (parsed.entry.kind === 'meta' && this.#seenContent) {
      this.#reject({
        number,
        text,
        reason: 'a meta line is only allowed as the first line (was a second run appended to this file?)',
      });
      return;
    }
    this.#seenContent = true;
    this.take(parsed.entry);
  }

  /** A bad line held in case it was the last is not: a line follows it. */
  #rejectPending(): void {
    const pending = this.#pending!;
    this.#pending = undefined;
    this.#reject(pending);
  }

  #reject(bad: BadLine): void {
    if (this.salvage) this.#skip(bad.number, bad.reason, bad.text);
    else throw corrupt(this.path, this.#unquoted(bad));
  }

  #unquoted(bad: BadLine): ShownLine {
    return unquoted(bad, this.path, this.link);
  }

  #skip(line: number, reason: string, text?: string): void {
    const bad = text === undefined ? { reason, text } : this.#unquoted({ number: line, text, reason });
    const shown =
      bad.text === undefined
        ? ''
        : ` — ${JSON.stringify(bad.text.length > 60 ? `${bad.text.slice(0, 57)}...` : bad.text)}`;
    this.onWarning({
      code: 'skipped_line',
      file: this.path,
      line,
      message: `${this.path}:${line}: skipped a corrupt line: ${bad.reason}${shown}`,
    });
  }
}

/** A history file read whole: its lines in order, and by kind. */
export interface LoadedHistory {
  readonly file: string;
  /** The meta line, when the file has one. */
  readonly meta: HistoryMeta | undefined;
  /** The table from the meta line, when the file has one. */
  readonly table: TransitionTable<string> | undefined;
  /** Every line in file order, with line numbers: what `validateHistory` and `summarizeHistory` take. */
  readonly entries: readonly HistoryEntry[];
  readonly records: readonly TransitionRecord<string>[];
  readonly rejected: readonly RejectedMove[];
  readonly resets: readonly ResetMarker[];
  /** The journal lines (LLM attempts and tool calls), in file order; empty for a file without a journal. */
  readonly journal: readonly JournalLineRead[];
  /** The HTTP exchanges `recordFetch` wrote, in file order; empty for a file without them. */
  readonly exchanges: readonly HttpExchangeLine[];
  readonly warnings: readonly HistoryWarning[];
  /** The line numbers `salvage` skipped, in order; empty without salvage. */
  readonly skippedLines: readonly number[];
}

/**
 * Reads a whole history file into memory (streaming it, so the text is never held twice).
 * For files too large to hold, give `readHistory(path)` to `validateHistory`,
 * `summarizeHistory` or `runFacts` instead. Warnings are returned, not emitted.
 */
export async function loadHistory(
  path: string,
  options: Omit<ReadHistoryOptions, 'onWarning'> = {},
): Promise<LoadedHistory> {
  const warnings: HistoryWarning[] = [];
  const entries: HistoryEntry[] = [];
  const records: TransitionRecord<string>[] = [];
  const rejected: RejectedMove[] = [];
  const resets: ResetMarker[] = [];
  const journal: JournalLineRead[] = [];
  const exchanges: HttpExchangeLine[] = [];
  let meta: HistoryMeta | undefined;
  let table: TransitionTable<string> | undefined;
  if (typeof options !== 'object' || options === null) throw new InvalidArgumentError('options', 'an object', options);
  for await (const chunk of readHistoryChunks(path, { ...options, onWarning: (w) => warnings.push(w) }))
    for (const entry of chunk) {
      entries.push(entry);
      switch (entry.kind) {
        case 'meta':
          ({ meta, table } = entry);
          break;
        case 'record':
          records.push(entry.record);
          break;
        case 'rejected':
          rejected.push(entry.rejected);
          break;
        case 'reset':
          resets.push(entry.reset);
          break;
        case 'journal':
          journal.push(entry.journal);
          break;
        case 'http':
          exchanges.push(entry.exchange);
          break;
      }
    }
  const skippedLines = warnings.filter((w) => w.code === 'skipped_line').map((w) => w.line);
  return { file: path, meta, table, entries, records, rejected, resets, journal, exchanges, warnings, skippedLines };
}

function corrupt(path: string, bad: ShownLine): HistoryFileError {
  return new HistoryFileError(
    'corrupt_line',
    path,
    `corrupt line: ${bad.reason} (read past corrupt lines with \`--salvage\` or \`{ salvage: true }\`)`,
    bad.text === undefined ? { line: bad.number } : { line: bad.number, snippet: bad.text },
  );
}

function emitWarning(warning: HistoryWarning): void {
  process.emitWarning(warning.message, {
    code: warning.code === 'cut_last_line' ? 'AGENT_SM_CUT_LAST_LINE' : 'AGENT_SM_SKIPPED_LINE',
  });
}
