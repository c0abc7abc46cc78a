import type { TransitionRecord } from '../machine/TransitionRecord';
import type { LineBytes } from './LineBytes';

/** Moves whose middle part (`,"from":…,"to":…,"description":…,"at":`) is remembered, and the longest description. */
const MIDDLE_CACHE_SIZE = 1024;
const MIDDLE_CACHE_CHARS = 256;

interface Middle {
  readonly from: string;
  readonly to: string;
  /** `,"from":…,"to":…,"description":…,"at":` in UTF-8. */
  readonly bytes: Buffer;
  /** `bytes`, then the `at` it was last written with and the key after it: one copy per line. */
  withAt: Buffer;
  at: number;
  /** Another move with the same description. */
  next: Middle | undefined;
}

/**
 * The bytes of the middle of a line, by description. State names and descriptions repeat (a
 * loop's descriptions are fixed strings): one lookup then stands for three JSON strings.
 * Shared by every sink of the process: a batch opens a sink per run, and a cache per sink
 * would start empty at every run, paying to fill it rather than saving.
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
// The usual ends of a line, whole: one copy rather than two.
const FORCED_END = ascii(',"forced":true}\n');
const NOT_FORCED_END = ascii(',"forced":false}\n');
/** The ends of a line moved on in under 64 ms, not forced, without data: `{durationMs},"forced":false}\n`. */
const ENDS = Array.from({ length: 64 }, (_, ms) => ascii(`${ms},"forced":false}\n`));
/** The fixed parts of a line, the two numbers at their longest, and the longer `forced`. */
const FIXED_BYTES = SEQ.length + 10 + 10 + NOT_FORCED.length + DATA.length + END.length;

/**
 * The last `at` written, and its bytes with the key after it: moves close together share
 * their millisecond. Rewritten in place when `at` changes (in a real loop, at most moves).
 */
let lastAt = NaN;
let AT_BYTES = Buffer.alloc(64);
let atLength = 0;
const DURATION_KEY = ascii(',"durationMs":');

/**
 * Appends a record's line to `out`: its JSON (exactly the record's fields, in its order) and
 * a newline, after a newline first with `newlineFirst` (the file's last line was left cut).
 * `dataText` is the record's data as JSON, made by the caller. Everything that can run a
 * caller's code (the `toJSON` of a field that is not a string or number) runs before the
 * first byte is appended, so a sink written from inside it cannot find `out` half-filled.
 * Returns where the line starts in `out`.
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
  if (at !== lastAt) setAt(at);
  if (middle !== undefined && middle.at !== at) withAt(middle, at);
  // Room for the longest line these parts can make, taken once: the bytes below are then put
  // by plain stores, which is what makes this cheaper than a string for write(2) to encode.
  const room =
    middle !== undefined && seqText === undefined && durationText === undefined && dataText === undefined
      ? middle.withAt.length
      : (middle?.withAt.length ?? 0) +
        3 *
          ((seqText?.length ?? 0) + (middleText?.length ?? 0) + (durationText?.length ?? 0) + (dataText?.length ?? 0));
  // Where the line starts: the end of what `out` holds, or its start when `fromStart` (a
  // writer's code run above may have used a shared buffer: what it left is not ours).
  if (fromStart) out.length = 0;
  const buf = out.room(1 + FIXED_BYTES + atLength + room);
  let o = out.length;
  if (newlineFirst) buf[o++] = 10;
  const start = o;
  o = copy(buf, o, SEQ);
  o = seqText === undefined ? putSmallInt(buf, o, seq) : putText(buf, o, seqText);
  if (middle !== undefined) {
    buf.set(middle.withAt, o);
    o += middle.withAt.length;
  } else {
    o = putText(buf, o, middleText!);
    for (let i = 0; i < atLength; i++) buf[o + i] = AT_BYTES[i]!;
    o += atLength;
  }
  const forced = record.forced === true;
  if (dataText === undefined && !forced && durationText === undefined && durationMs < ENDS.length) {
    // The usual end of a line: a short duration, not forced, no data.
    const end = ENDS[durationMs]!;
    buf.set(end, o);
    o += end.length;
  } else {
    o = durationText === undefined ? putSmallInt(buf, o, durationMs) : putText(buf, o, durationText);
    if (dataText === undefined) o = copy(buf, o, forced ? FORCED_END : NOT_FORCED_END);
    else {
      o = copy(buf, o, forced ? FORCED : NOT_FORCED);
      o = copy(buf, o, DATA);
      o = putText(buf, o, dataText);
      o = copy(buf, o, END);
    }
  }
  out.length = o;
  return start;
}

/** Remembers `at` and its bytes with the key after them. */
function setAt(at: number): void {
  let o: number;
  if (Number.isSafeInteger(at) && at >= 0) {
    // A time in epoch milliseconds: its digits, without making a string.
    let digits = 1;
    for (let x = at; x >= 10; x = Math.floor(x / 10)) digits++;
    o = digits;
    for (let x = at, i = digits; i > 0; x = Math.floor(x / 10)) AT_BYTES[--i] = 48 + (x % 10);
  } else {
    const text = jsonNumber(at);
    if (text.length * 3 + DURATION_KEY.length > AT_BYTES.length) AT_BYTES = Buffer.alloc(text.length * 3 + 64);
    o = AT_BYTES.write(text, 0, 'utf8');
  }
  atLength = copy(AT_BYTES, o, DURATION_KEY);
  lastAt = at;
}

/** Copies a short `src` into `buf` at `o`, and returns the offset after it. */
function copy(buf: Buffer, o: number, src: Buffer): number {
  const n = src.length;
  for (let i = 0; i < n; i++) buf[o + i] = src[i]!;
  return o + n;
}

/** Writes the bytes of `at` (the last `setAt`) after the middle's, resizing them when their size changed. */
function withAt(middle: Middle, at: number): void {
  const size = middle.bytes.length + atLength;
  if (middle.withAt.length !== size) {
    middle.withAt = Buffer.allocUnsafe(size);
    middle.bytes.copy(middle.withAt);
  }
  const buf = middle.withAt;
  for (let i = 0, o = middle.bytes.length; i < atLength; i++) buf[o + i] = AT_BYTES[i]!;
  middle.at = at;
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
  const middle: Middle = { from, to, bytes, withAt: bytes, at: NaN, next: first };
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
