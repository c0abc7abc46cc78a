import * as fs from 'node:fs';
import * as readline from 'node:readline';
import type { HistoryEntry, HistoryMeta, HistoryWarning, RejectedMove, ResetMarker } from './HistoryEntry';
import { HistoryFileError } from './HistoryFileError';
import { InvalidArgumentError } from '../machine/InvalidArgumentError';
import { parseHistoryLine } from './parseHistoryLine';
import type { TransitionRecord } from '../machine/TransitionRecord';
import type { TransitionTable } from '../machine/TransitionTable';
import { messageOf } from '../internal/messageOf';

/** Options of `readHistory` and `loadHistory`: where warnings about odd but readable lines go. */
export interface ReadHistoryOptions {
  /**
   * Called for what is odd but readable, such as the cut last line a crash leaves. Default:
   * `process.emitWarning`, so a warning is never silent.
   */
  onWarning?: (warning: HistoryWarning) => void;
}

/**
 * Reads a JSON Lines history file line by line and yields each line parsed, with its number,
 * holding one line at a time: a million-line file is read in flat memory. Accepts files with
 * or without the meta line (which, when present, must be the first). Blank lines are skipped.
 *
 * The last line may be cut (no newline at its end, not valid): a crash mid-write leaves that,
 * so it is skipped with a warning. Any other line that is not a history line throws
 * `HistoryFileError` (`corrupt_line`) naming the file, the line number and the text;
 * a missing file throws `not_found`.
 */
export async function* readHistory(path: string, options: ReadHistoryOptions = {}): AsyncGenerator<HistoryEntry, void, undefined> {
  const { onWarning = emitWarning } = options;
  await assertReadable(path);
  const stream = fs.createReadStream(path, { encoding: 'utf8' });
  const lines = readline.createInterface({ input: stream, crlfDelay: Infinity });
  let number = 0;
  let seenContent = false;
  // A line that did not parse is held until we know whether it is the last one.
  let pending: { number: number; text: string; reason: string } | undefined;
  try {
    for await (const raw of lines) {
      number++;
      const text = number === 1 && raw.charCodeAt(0) === 0xfeff ? raw.slice(1) : raw;
      if (text.trim() === '') continue;
      if (pending !== undefined) throw corrupt(path, pending);
      const parsed = parseHistoryLine(text, number);
      if (!parsed.ok) {
        pending = { number, text, reason: parsed.reason };
        continue;
      }
      if (parsed.entry.kind === 'meta' && seenContent) {
        throw corrupt(path, { number, text, reason: 'a meta line is only allowed as the first line (was a second run appended to this file?)' });
      }
      seenContent = true;
      yield parsed.entry;
    }
  } catch (error) {
    if (error instanceof HistoryFileError) throw error;
    throw new HistoryFileError('read_failed', path, `cannot read: ${messageOf(error)}`, { cause: error });
  } finally {
    lines.close();
    stream.destroy();
  }
  if (pending === undefined) return;
  if (await endsWithNewline(path)) throw corrupt(path, pending);
  onWarning({
    code: 'cut_last_line',
    file: path,
    line: pending.number,
    message: `${path}:${pending.number}: the last line is incomplete (the run was probably killed while writing it) and was skipped`,
  });
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
  readonly warnings: readonly HistoryWarning[];
}

/**
 * Reads a whole history file into memory (streaming it, so the text is never held twice).
 * For files too large to hold, iterate `readHistory` and feed `HistoryValidator` or
 * `HistorySummarizer` instead. Warnings are returned, not emitted.
 */
export async function loadHistory(path: string): Promise<LoadedHistory> {
  const warnings: HistoryWarning[] = [];
  const entries: HistoryEntry[] = [];
  const records: TransitionRecord<string>[] = [];
  const rejected: RejectedMove[] = [];
  const resets: ResetMarker[] = [];
  let meta: HistoryMeta | undefined;
  let table: TransitionTable<string> | undefined;
  for await (const entry of readHistory(path, { onWarning: (w) => warnings.push(w) })) {
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
    }
  }
  return { file: path, meta, table, entries, records, rejected, resets, warnings };
}

async function assertReadable(path: string): Promise<void> {
  if (typeof path !== 'string' || path === '') throw new InvalidArgumentError('path', 'a history file path', path);
  let stat: fs.Stats;
  try {
    stat = await fs.promises.stat(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw new HistoryFileError('not_found', path, 'no such file', { cause: error });
    throw new HistoryFileError('read_failed', path, `cannot read: ${messageOf(error)}`, { cause: error });
  }
  if (stat.isDirectory()) throw new HistoryFileError('read_failed', path, 'is a directory, not a history file');
}

async function endsWithNewline(path: string): Promise<boolean> {
  const handle = await fs.promises.open(path, 'r');
  try {
    const { size } = await handle.stat();
    if (size === 0) return false;
    const byte = Buffer.alloc(1);
    await handle.read(byte, 0, 1, size - 1);
    return byte[0] === 0x0a;
  } finally {
    await handle.close();
  }
}

function corrupt(path: string, bad: { number: number; text: string; reason: string }): HistoryFileError {
  return new HistoryFileError('corrupt_line', path, `corrupt line: ${bad.reason}`, { line: bad.number, snippet: bad.text });
}

function emitWarning(warning: HistoryWarning): void {
  process.emitWarning(warning.message, { code: 'AGENT_SM_CUT_LAST_LINE' });
}

