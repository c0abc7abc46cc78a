/**
 * The longest history line, in bytes, that the readers take by default and the writer writes:
 * one limit known to both sides, so no file the sink accepts is refused by a reader. Far above
 * any real line, far below what a string can hold.
 */
export const DEFAULT_MAX_LINE_BYTES = 64 * 1024 * 1024;

/** Whether `line` is over `max` UTF-8 bytes; measured only when its length says it may be. */
export function overLineLimit(line: string, max: number): boolean {
  // A UTF-16 code unit is at most 3 bytes of UTF-8 (a surrogate pair, 2 units, is 4).
  if (line.length * 3 <= max) return false;
  return line.length > max || Buffer.byteLength(line, 'utf8') > max;
}
