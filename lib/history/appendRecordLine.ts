import type { TransitionRecord } from '../machine/TransitionRecord';
import type { LineBytes } from './LineBytes';

// A record's line as UTF-8 bytes, exactly as JSON.stringify writes the record (same fields,
// same order, same text), made without a string: a string of pieces would be flattened and
// encoded again by every writeSync, which costs a line more than putting its bytes together.

/** Moves whose middle part (`,"from":…,"to":…,"description":…,"at":`) is remembered, and the longest description. */
const MIDDLE_CACHE_SIZE = 1024;
const MIDDLE_CACHE_CHARS = 256;

/** Room before a move's middle in its line buffer: a newline, `{"seq":` and ten digits. */
const HEAD = 24;
/** Room after it, past its time: the usual end of a line, or data up to this many bytes. */
const TAIL = 64;
/** Data longer than this (in UTF-16 units) is put together in the caller's buffer instead. */
const PLACED_DATA_CHARS = 1024;

interface Middle {
  readonly from: string;
  readonly to: string;
  /** `,"from":…,"to":…,"description":…,"at":` in UTF-8. */
  readonly bytes: Buffer;
  /**
   * The move's line as last put together: HEAD bytes of room, `bytes`, the `at` it was last
   * written with and the key after it (`size` bytes from HEAD in all), then the line's end.
   */
  line: Buffer;
  size: number;
  at: number;
  /** Another move with the same description. */
  next: Middle | undefined;
}

/**
 * The middles of moves, by description. State names and descriptions repeat (a loop's
 * descriptions are fixed strings): one lookup then stands for three JSON strings. Shared by
 * every sink of the process: a batch opens a sink per run, and a cache per sink would start
 * empty at every run, paying to fill it rather than saving.
 */
// A dictionary object rather than a Map: its keyed load measured a little faster here.
const MIDDLES: Record<string, Middle | undefined> = Object.create(null) as Record<string, Middle | undefined>;
let middles = 0;

const ascii = (text: string): Buffer => Buffer.from(text, 'latin1');
const SEQ = ascii('{"seq":');
const FORCED = ascii(',"forced":true');
const NOT_FORCED = ascii(',"forced":false');
const DATA = ascii(',"data":');
const END = ascii('}\n');
const FORCED_END = ascii(',"forced":true}\n');
const NOT_FORCED_END = ascii(',"forced":false}\n');
/** The ends of a line moved on in under 64 ms, not forced, without data: `{durationMs},"forced":false}\n`. */
const ENDS = Array.from({ length: 64 }, (_, ms) => ascii(`${ms},"forced":false}\n`));
const DURATION_KEY = ascii(',"durationMs":');
/** The fixed parts of a line, the two numbers at their longest, and the longer `forced`. */
const FIXED_BYTES = SEQ.length + 10 + DURATION_KEY.length + 10 + NOT_FORCED.length + DATA.length + END.length;

/**
 * The last numeric `at` written, and its bytes with the key after it: moves close together
 * share their millisecond. Rewritten in place when `at` changes (in a real loop, most moves).
 */
let lastAt = NaN;
const AT_BYTES = Buffer.alloc(64);
let atLength = 0;

/** Where `placeRecordLine` put the line: `buf` from `start` to `end`. */
export const placed = { buf: SEQ, start: 0, end: 0 };

/**
 * Puts a record's line (and a newline first with `newlineFirst`) together in the buffer its
 * move keeps, around the move's middle, which is then not copied at all, and says where in
 * `placed`. `dataText`: the record's data as JSON, made by the caller. Returns false, having
 * done nothing, for a record it does not take: a move not remembered, a number that is not a
 * whole one under 2^31 (`seq`, `durationMs`) or not a number (`at`), long data; use
 * `appendRecordLine` for it. Runs no caller's code. The line stays valid until the next call.
 */
export function placeRecordLine(
  record: TransitionRecord<string>,
  dataText: string | undefined,
  newlineFirst: boolean,
): boolean {
  const { seq, at, durationMs } = record;
  if (!isSmallInt(seq) || !isSmallInt(durationMs) || typeof at !== 'number') return false;
  if (dataText !== undefined && dataText.length > PLACED_DATA_CHARS) return false;
  const middle = middleOf(record.from, record.to, record.description);
  if (middle === undefined) return false;
  if (at !== lastAt) setAt(at);
  if (middle.at !== at) withAt(middle, at);
  const tail = dataText === undefined ? TAIL : FIXED_BYTES + 3 * dataText.length;
  if (HEAD + middle.size + tail > middle.line.length) grow(middle, tail);
  const buf = middle.line;
  const o = putEnd(buf, HEAD + middle.size, durationMs, undefined, record.forced === true, dataText);
  // The head, backwards from the middle: the seq's digits, then `{"seq":`, then the newline.
  let s = HEAD;
  let x = seq;
  do {
    buf[--s] = 48 + (x % 10);
    x = (x / 10) | 0;
  } while (x > 0);
  s -= SEQ.length;
  copy(buf, s, SEQ);
  if (newlineFirst) buf[--s] = 10;
  placed.buf = buf;
  placed.start = s;
  placed.end = o;
  return true;
}

/**
 * Appends a record's line to `out`: its JSON (exactly the record's fields, in its order) and
 * a newline, after a newline first with `newlineFirst` (the file's last line was left cut).
 * Takes every record. `dataText` is the record's data as JSON, made by the caller.
 * Everything that can run a caller's code (the `toJSON` of a field that is not a string or
 * number) runs before the first byte is appended, so a sink written from inside it cannot
 * find `out` half-filled. Returns where the line starts in `out`.
 */
export function appendRecordLine(
  out: LineBytes,
  record: TransitionRecord<string>,
  dataText: string | undefined,
  newlineFirst: boolean,
  fromStart: boolean,
): number {
  const { seq, from, to, description, at, durationMs } = record;
  const middle = middleOf(from, to, description);
  const middleText = middle === undefined ? middleJson(from, to, description) : undefined;
  const seqText = isSmallInt(seq) ? undefined : jsonNumber(seq);
  const durationText = isSmallInt(durationMs) ? undefined : jsonNumber(durationMs);
  const atText = typeof at === 'number' ? undefined : `${json(at)},"durationMs":`;
  if (atText === undefined && at !== lastAt) setAt(at);
  const texts =
    (seqText?.length ?? 0) +
    (middleText?.length ?? 0) +
    (atText?.length ?? 0) +
    (durationText?.length ?? 0) +
    (dataText?.length ?? 0);
  // Where the line starts: the end of what `out` holds, or its start when `fromStart` (a
  // writer's code run above may have used a shared buffer: what it left is not ours).
  if (fromStart) out.length = 0;
  const buf = out.room(1 + FIXED_BYTES + (middle?.bytes.length ?? 0) + atLength + 3 * texts);
  let o = out.length;
  if (newlineFirst) buf[o++] = 10;
  const start = o;
  o = copy(buf, o, SEQ);
  o = seqText === undefined ? putSmallInt(buf, o, seq) : putText(buf, o, seqText);
  o = middle !== undefined ? copy(buf, o, middle.bytes) : putText(buf, o, middleText!);
  if (atText === undefined) {
    for (let i = 0; i < atLength; i++) buf[o + i] = AT_BYTES[i]!;
    o += atLength;
  } else o = putText(buf, o, atText);
  out.length = putEnd(buf, o, durationMs, durationText, record.forced === true, dataText);
  return start;
}

/**
 * Puts the end of a line at `o`, after `,"durationMs":`: the duration (`durationText` when it
 * is not a small whole number), `forced`, the data, `}` and the newline. Returns the offset after it.
 */
function putEnd(
  buf: Buffer,
  o: number,
  durationMs: number,
  durationText: string | undefined,
  forced: boolean,
  dataText: string | undefined,
): number {
  // The usual end, made once: a short duration, not forced, no data.
  if (durationText === undefined && dataText === undefined && !forced && durationMs < ENDS.length)
    return copy(buf, o, ENDS[durationMs]!);
  o = durationText === undefined ? putSmallInt(buf, o, durationMs) : putText(buf, o, durationText);
  if (dataText === undefined) return copy(buf, o, forced ? FORCED_END : NOT_FORCED_END);
  o = copy(buf, o, forced ? FORCED : NOT_FORCED);
  o = copy(buf, o, DATA);
  o = putText(buf, o, dataText);
  return copy(buf, o, END);
}

/** Remembers a numeric `at` and its bytes with the key after them. */
function setAt(at: number): void {
  let o: number;
  if (Number.isSafeInteger(at) && at >= 0) {
    // A time in epoch milliseconds: its digits, without making a string.
    let digits = 1;
    for (let x = at; x >= 10; x = Math.floor(x / 10)) digits++;
    o = digits;
    for (let x = at, i = digits; i > 0; x = Math.floor(x / 10)) AT_BYTES[--i] = 48 + (x % 10);
  } else o = AT_BYTES.write(jsonNumber(at), 0, 'latin1');
  atLength = copy(AT_BYTES, o, DURATION_KEY);
  lastAt = at;
}

/** Writes the bytes of `at` (the last `setAt`) after the middle's in its line buffer. */
function withAt(middle: Middle, at: number): void {
  const size = middle.bytes.length + atLength;
  if (HEAD + size + TAIL > middle.line.length) grow(middle, TAIL);
  const buf = middle.line;
  for (let i = 0, o = HEAD + middle.bytes.length; i < atLength; i++) buf[o + i] = AT_BYTES[i]!;
  middle.size = size;
  middle.at = at;
}

/** Gives a middle a line buffer with room for `tail` bytes after its middle and time. */
function grow(middle: Middle, tail: number): void {
  const line = Buffer.allocUnsafe(HEAD + middle.bytes.length + AT_BYTES.length + tail);
  middle.line.copy(line, HEAD, HEAD, HEAD + middle.size);
  middle.line = line;
}

/** Copies `src` into `buf` at `o`, and returns the offset after it. */
function copy(buf: Buffer, o: number, src: Buffer): number {
  const n = src.length;
  // A loop for short runs: `set` costs more than it copies below some 32 bytes.
  if (n <= 32) for (let i = 0; i < n; i++) buf[o + i] = src[i]!;
  else buf.set(src, o);
  return o + n;
}

function putText(buf: Buffer, o: number, text: string): number {
  return o + buf.write(text, o, 'utf8');
}

/** Puts a whole number in 0 … 2^31−1 in decimal at `o`, and returns the offset after it. */
function putSmallInt(buf: Buffer, o: number, value: number): number {
  let digits = 1;
  for (let x = value; x >= 10; x = (x / 10) | 0) digits++;
  const end = o + digits;
  for (let x = value, at = end; at > o; x = (x / 10) | 0) buf[--at] = 48 + (x % 10);
  return end;
}

/** The remembered middle of a move, or undefined when it is not (yet) remembered. */
function middleOf(from: unknown, to: unknown, description: unknown): Middle | undefined {
  if (typeof description !== 'string') return undefined;
  const first = MIDDLES[description];
  for (let m = first; m !== undefined; m = m.next) if (m.from === from && m.to === to) return m;
  // Text made per move (ids, counts) would only churn the cache: once full it keeps what it has.
  if (middles >= MIDDLE_CACHE_SIZE || description.length > MIDDLE_CACHE_CHARS) return undefined;
  if (typeof from !== 'string' || typeof to !== 'string') return undefined;
  const bytes = Buffer.from(middleJson(from, to, description), 'utf8');
  const line = Buffer.allocUnsafe(HEAD + bytes.length + AT_BYTES.length + TAIL);
  bytes.copy(line, HEAD);
  const middle: Middle = { from, to, bytes, line, size: bytes.length, at: NaN, next: first };
  MIDDLES[description] = middle;
  middles++;
  return middle;
}

function middleJson(from: unknown, to: unknown, description: unknown): string {
  return `,"from":${json(from)},"to":${json(to)},"description":${json(description)},"at":`;
}

/** A whole number in 0 … 2^31−1: `putSmallInt` writes it without making a string. */
function isSmallInt(value: unknown): value is number {
  return ((value as number) | 0) === value && (value as number) >= 0;
}

/** A number as JSON writes it (a non-finite one as `null`); anything else as JSON. */
function jsonNumber(value: unknown): string {
  return typeof value === 'number' ? (Number.isFinite(value) ? String(value) : 'null') : json(value);
}

function json(value: unknown): string {
  return JSON.stringify(value) ?? 'null';
}
