import type { HistoryEntry } from './HistoryEntry';
import { skipJsonValue, skipNumber } from './skipJsonValue';
import type { TransitionRecord } from '../machine/TransitionRecord';

/** The literal bytes between the fields of a record line, in the order `JsonlHistorySink.write` writes them. */
const SEQ = bytes('{"seq":');
const FROM = bytes(',"from":"');
const TO = bytes(',"to":"');
const DESCRIPTION = bytes(',"description":"');
const AT = bytes(',"at":');
const DURATION = bytes(',"durationMs":');
const FORCED = bytes(',"forced":');
const DATA = bytes(',"data":');
const TRUE = bytes('true');
const FALSE = bytes('false');

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const NEWLINE = 0x0a;
const RETURN = 0x0d;
const CLOSE = 0x7d;
const COMMA = 0x2c;
const MINUS = 0x2d;
const ZERO = 0x30;
const DOT = 0x2e;

/** Slots of the string cache: a power of two, enough for a run's state names and its usual descriptions. */
const CACHE_SLOTS = 1024;
/** Longer strings are made afresh each time: comparing them costs about what making them does. */
const CACHE_MAX_LENGTH = 64;
const WORDS_PER_SLOT = CACHE_MAX_LENGTH / 4;
/** Cached words are read in the machine's byte order; the scan makes little-endian ones. */
const LITTLE_ENDIAN = new Uint8Array(Uint32Array.of(1).buffer)[0] === 1;

/**
 * The fast path of the history reader: reads a record line written by `JsonlHistorySink`
 * (`{"seq":…,"from":…,"to":…,"description":…,"at":…,"durationMs":…,"forced":…[,"data":…]}`,
 * those keys in that order, no spaces) straight from the file's bytes, without decoding the
 * line or running `JSON.parse` over all of it. Anything else — another key order, a space,
 * an escape in a string, a field `parseHistoryLine` would reject, meta, rejected and reset
 * lines — makes `scan` return undefined, and the caller parses the line the general way;
 * so whatever this returns is exactly what `parseHistoryLine` returns for the same line
 * (less `data`, with `withData: false`).
 * Short ASCII strings (state names, repeated descriptions) come from a small cache, so most
 * lines make no string at all and records share them.
 */
export class RecordLineScanner {
  /** After a successful `scan`: where the line's newline is. */
  newline = -1;
  readonly #cache: (string | undefined)[] = new Array<string | undefined>(CACHE_SLOTS).fill(undefined);
  /**
   * The bytes of each cached string, CACHE_MAX_LENGTH per slot, also seen as 32-bit words:
   * compared with the words the scan read (a string's characters are slower to reach).
   */
  readonly #cachedWords = new Int32Array(CACHE_SLOTS * WORDS_PER_SLOT);
  readonly #cachedBytes = new Uint8Array(this.#cachedWords.buffer);
  /** The whole words of the string being read. */
  readonly #scanned = new Int32Array(WORDS_PER_SLOT);
  // Set by #string and #number for the field just read (one scan at a time, so fields suffice).
  #pos = 0;
  #text = '';
  #value = 0;

  /**
   * `withData: false`: a record's `data` is checked to be JSON but not built, and the record
   * has none, for a reader that never looks at it (`agent-sm validate`): building it is most
   * of the cost of a line that has it.
   */
  constructor(readonly withData = true) {}

  /**
   * Reads the line starting at `start` in `bytes`, whose newline is before `limit`; returns
   * its entry (numbered `line`) and sets `newline`, or undefined when the line is not in the
   * sink's exact form (or is not valid), leaving it to the general path.
   */
  scan(bytes: Buffer, start: number, limit: number, line: number): HistoryEntry | undefined {
    let p = literal(bytes, start, limit, SEQ);
    if (p < 0 || !this.#number(bytes, p, limit)) return undefined;
    const seq = this.#value;
    if (!(Number.isSafeInteger(seq) && seq >= 1)) return undefined;
    p = literal(bytes, this.#pos, limit, FROM);
    if (p < 0 || !this.#string(bytes, p, limit) || this.#text === '') return undefined;
    const from = this.#text;
    p = literal(bytes, this.#pos, limit, TO);
    if (p < 0 || !this.#string(bytes, p, limit) || this.#text === '') return undefined;
    const to = this.#text;
    p = literal(bytes, this.#pos, limit, DESCRIPTION);
    if (p < 0 || !this.#string(bytes, p, limit)) return undefined;
    const description = this.#text;
    p = literal(bytes, this.#pos, limit, AT);
    if (p < 0 || !this.#number(bytes, p, limit) || !Number.isFinite(this.#value)) return undefined;
    const at = this.#value;
    p = literal(bytes, this.#pos, limit, DURATION);
    if (p < 0 || !this.#number(bytes, p, limit) || !Number.isFinite(this.#value)) return undefined;
    const durationMs = this.#value;
    p = literal(bytes, this.#pos, limit, FORCED);
    if (p < 0) return undefined;
    let forced: boolean;
    let q = literal(bytes, p, limit, TRUE);
    if (q >= 0) forced = true;
    else {
      q = literal(bytes, p, limit, FALSE);
      if (q < 0) return undefined;
      forced = false;
    }
    let record: TransitionRecord<string>;
    if (bytes[q] === CLOSE) {
      const end = lineEnd(bytes, q + 1, limit);
      if (end < 0) return undefined;
      this.newline = end;
      record = { seq, from, to, description, at, durationMs, forced };
    } else {
      // `data` is any JSON, and the last field: it runs to the `}` before the newline.
      const d = literal(bytes, q, limit, DATA);
      if (d < 0) return undefined;
      const nl = bytes.indexOf(NEWLINE, d);
      if (nl < 0 || nl >= limit) return undefined;
      const close = bytes[nl - 1] === RETURN ? nl - 2 : nl - 1;
      if (close <= d || bytes[close] !== CLOSE) return undefined;
      let data: unknown;
      if (this.withData || skipJsonValue(bytes, d, close) !== close) {
        // Built, or (a form skipJsonValue leaves to it) only checked.
        try {
          data = JSON.parse(bytes.toString('utf8', d, close));
        } catch {
          return undefined;
        }
      }
      this.newline = nl;
      record = this.withData
        ? { seq, from, to, description, at, durationMs, forced, data }
        : { seq, from, to, description, at, durationMs, forced };
    }
    return { kind: 'record', line, record };
  }

  /** A JSON string's content from `p` (after its opening quote) up to its closing quote; false on an escape, a control character, or no closing quote. */
  #string(bytes: Buffer, p: number, limit: number): boolean {
    const start = p;
    let hash = 0;
    let ascii = true;
    let words = 0;
    const scanned = this.#scanned;
    // Four bytes at a time while none is a quote, a backslash, a control character or
    // non-ASCII (tests on a whole word: a byte below n exists when (w - n·0x01010101) & ~w &
    // 0x80808080 is not 0, for words of bytes under 0x80); the rest byte by byte below.
    while (p + 4 <= limit) {
      const w = bytes[p]! | (bytes[p + 1]! << 8) | (bytes[p + 2]! << 16) | (bytes[p + 3]! << 24);
      const quote = w ^ 0x22222222;
      const backslash = w ^ 0x5c5c5c5c;
      if (
        (w & 0x80808080) |
        ((w - 0x20202020) & ~w & 0x80808080) |
        ((quote - 0x01010101) & ~quote & 0x80808080) |
        ((backslash - 0x01010101) & ~backslash & 0x80808080)
      )
        break;
      hash = (Math.imul(hash, 31) + w) | 0;
      if (words < WORDS_PER_SLOT) scanned[words] = w;
      words++;
      p += 4;
    }
    for (;;) {
      if (p >= limit) return false;
      const b = bytes[p]!;
      if (b === QUOTE) break;
      // An escape needs unescaping; a raw control character is not JSON: both for the general path.
      if (b === BACKSLASH || b < 0x20) return false;
      if (b >= 0x80) ascii = false;
      hash = (Math.imul(hash, 31) + b) | 0;
      p++;
    }
    this.#pos = p + 1;
    const length = p - start;
    if (!ascii) {
      this.#text = bytes.toString('utf8', start, p);
      return true;
    }
    if (length > CACHE_MAX_LENGTH) {
      this.#text = bytes.toString('latin1', start, p);
      return true;
    }
    const slot = (hash ^ (hash >>> 10) ^ length) & (CACHE_SLOTS - 1);
    const cached = this.#cache[slot];
    const cachedBytes = this.#cachedBytes;
    const at = slot * CACHE_MAX_LENGTH;
    if (cached !== undefined && cached.length === length) {
      // The words read above against the cached ones, then the bytes after them.
      const cachedWords = this.#cachedWords;
      const atWord = slot * WORDS_PER_SLOT;
      const sameWords = LITTLE_ENDIAN ? words : 0;
      let j = 0;
      while (j < sameWords && cachedWords[atWord + j] === scanned[j]) j++;
      let k = j === sameWords ? 4 * sameWords : length + 1;
      while (k < length && cachedBytes[at + k] === bytes[start + k]) k++;
      if (k === length) {
        this.#text = cached;
        return true;
      }
    }
    const text = length === 0 ? '' : bytes.toString('latin1', start, p);
    this.#cache[slot] = text;
    cachedBytes.set(bytes.subarray(start, p), at);
    this.#text = text;
    return true;
  }

  /** A JSON number from `p`; false when there is none, or more follows it than a comma or `}`. */
  #number(bytes: Buffer, p: number, limit: number): boolean {
    const start = p;
    const negative = bytes[p] === MINUS;
    if (negative) p++;
    let b = p < limit ? bytes[p]! : -1;
    if (!isDigit(b)) return false;
    let value = 0;
    const digitsStart = p;
    if (b === ZERO) p++;
    else while (p < limit && isDigit(bytes[p]!)) value = value * 10 + (bytes[p++]! - ZERO);
    b = p < limit ? bytes[p]! : -1;
    // Up to 15 digits the sum above is exact; a fraction, an exponent or more digits are left
    // to the engine's own conversion, which rounds exactly as JSON.parse does.
    if (b === DOT || b === 0x65 || b === 0x45 || p - digitsStart > 15) {
      p = skipNumber(bytes, start, limit);
      if (p < 0) return false;
      b = p < limit ? bytes[p]! : -1;
      this.#value = Number(bytes.toString('latin1', start, p));
    } else this.#value = negative ? -value : value;
    if (b !== COMMA && b !== CLOSE) return false;
    this.#pos = p;
    return true;
  }
}

/** Where the line ends after the record's `}` at `p - 1`: its newline, after at most one carriage return; -1 when anything else follows. */
function lineEnd(bytes: Uint8Array, p: number, limit: number): number {
  if (p < limit && bytes[p] === NEWLINE) return p;
  if (p + 1 < limit && bytes[p] === RETURN && bytes[p + 1] === NEWLINE) return p + 1;
  return -1;
}

/** The position after `expected` when the bytes at `p` are exactly it, else -1. */
function literal(bytes: Uint8Array, p: number, limit: number, expected: Literal): number {
  if (p + expected.length > limit) return -1;
  // Four bytes to a comparison, against words made once: a quarter of the compares and loads.
  const words = expected.words;
  let q = p;
  for (let k = 0; k < words.length; k++, q += 4) {
    if ((bytes[q]! | (bytes[q + 1]! << 8) | (bytes[q + 2]! << 16) | (bytes[q + 3]! << 24)) !== words[k]) return -1;
  }
  const tail = expected.tail;
  for (let k = 0; k < tail.length; k++, q++) if (bytes[q] !== tail[k]) return -1;
  return q;
}

/** Literal bytes to match: as little-endian 32-bit words, then the bytes left over. */
interface Literal {
  readonly length: number;
  readonly words: readonly number[];
  readonly tail: readonly number[];
}

function isDigit(b: number): boolean {
  return b >= ZERO && b <= 0x39;
}

function bytes(text: string): Literal {
  const codes = Array.from(text, (c) => c.charCodeAt(0));
  const words: number[] = [];
  let k = 0;
  for (; k + 4 <= codes.length; k += 4)
    words.push(codes[k]! | (codes[k + 1]! << 8) | (codes[k + 2]! << 16) | (codes[k + 3]! << 24));
  return { length: codes.length, words, tail: codes.slice(k) };
}
