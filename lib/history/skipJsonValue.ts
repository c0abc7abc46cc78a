const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/** How deep `skipJsonValue` follows nested arrays and objects before it gives up. */
const MAX_DEPTH = 64;

/**
 * Where the JSON value starting at `p` in `bytes` ends, without building it; -1 when the
 * bytes there are not one, or are outside the plain form it checks: no whitespace between
 * tokens (JSON.stringify writes none) and at most 64 levels deep. So a value this accepts is
 * always one `JSON.parse` accepts; one it declines may still be valid, and is for
 * `JSON.parse` to judge. Stops before `end`.
 */
export function skipJsonValue(bytes: Uint8Array, p: number, end: number): number {
  return skip(bytes, p, end, 0);
}

function skip(bytes: Uint8Array, p: number, end: number, depth: number): number {
  if (p >= end) return -1;
  const b = bytes[p]!;
  if (b === QUOTE) return skipString(bytes, p + 1, end);
  if (b === 0x7b) {
    // An object: "key":value pairs, separated by commas.
    if (depth >= MAX_DEPTH) return -1;
    p++;
    if (p < end && bytes[p] === 0x7d) return p + 1;
    for (;;) {
      if (p >= end || bytes[p] !== QUOTE) return -1;
      p = skipString(bytes, p + 1, end);
      if (p < 0 || p >= end || bytes[p] !== 0x3a) return -1;
      p = skip(bytes, p + 1, end, depth + 1);
      if (p < 0 || p >= end) return -1;
      if (bytes[p] === 0x7d) return p + 1;
      if (bytes[p] !== 0x2c) return -1;
      p++;
    }
  }
  if (b === 0x5b) {
    // An array: values separated by commas.
    if (depth >= MAX_DEPTH) return -1;
    p++;
    if (p < end && bytes[p] === 0x5d) return p + 1;
    for (;;) {
      p = skip(bytes, p, end, depth + 1);
      if (p < 0 || p >= end) return -1;
      if (bytes[p] === 0x5d) return p + 1;
      if (bytes[p] !== 0x2c) return -1;
      p++;
    }
  }
  if (b === 0x74) return word(bytes, p, end, TRUE);
  if (b === 0x66) return word(bytes, p, end, FALSE);
  if (b === 0x6e) return word(bytes, p, end, NULL);
  return skipNumber(bytes, p, end);
}

/** A string's content from `p` (after its opening quote): the position after its closing quote, or -1. */
function skipString(bytes: Uint8Array, p: number, end: number): number {
  while (p < end) {
    const b = bytes[p]!;
    if (b === QUOTE) return p + 1;
    if (b < 0x20) return -1;
    if (b === BACKSLASH) {
      p++;
      if (p >= end) return -1;
      const e = bytes[p]!;
      if (e === 0x75) {
        for (let k = 1; k <= 4; k++) if (p + k >= end || !isHex(bytes[p + k]!)) return -1;
        p += 4;
      } else if (!(
        e === QUOTE ||
        e === BACKSLASH ||
        e === 0x2f ||
        e === 0x62 ||
        e === 0x66 ||
        e === 0x6e ||
        e === 0x72 ||
        e === 0x74
      ))
        return -1;
    }
    // Any other byte, UTF-8 or not, is text: the decoder never turns bytes into a quote or a backslash.
    p++;
  }
  return -1;
}

/** `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?` from `p`: the position after it, or -1. */
export function skipNumber(bytes: Uint8Array, p: number, end: number): number {
  if (p < end && bytes[p] === 0x2d) p++;
  if (p >= end || !isDigit(bytes[p]!)) return -1;
  if (bytes[p] === 0x30) p++;
  else while (p < end && isDigit(bytes[p]!)) p++;
  if (p < end && bytes[p] === 0x2e) {
    p++;
    if (p >= end || !isDigit(bytes[p]!)) return -1;
    while (p < end && isDigit(bytes[p]!)) p++;
  }
  if (p < end && (bytes[p] === 0x65 || bytes[p] === 0x45)) {
    p++;
    if (p < end && (bytes[p] === 0x2b || bytes[p] === 0x2d)) p++;
    if (p >= end || !isDigit(bytes[p]!)) return -1;
    while (p < end && isDigit(bytes[p]!)) p++;
  }
  return p;
}

const TRUE = [0x74, 0x72, 0x75, 0x65];
const FALSE = [0x66, 0x61, 0x6c, 0x73, 0x65];
const NULL = [0x6e, 0x75, 0x6c, 0x6c];

function word(bytes: Uint8Array, p: number, end: number, expected: readonly number[]): number {
  if (p + expected.length > end) return -1;
  for (let k = 0; k < expected.length; k++) if (bytes[p + k] !== expected[k]) return -1;
  return p + expected.length;
}

function isDigit(b: number): boolean {
  return b >= 0x30 && b <= 0x39;
}

function isHex(b: number): boolean {
  return (b >= 0x30 && b <= 0x39) || (b >= 0x61 && b <= 0x66) || (b >= 0x41 && b <= 0x46);
}
