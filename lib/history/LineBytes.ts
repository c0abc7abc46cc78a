/**
 * A growable run of UTF-8 bytes that history lines are put together in. A line goes to
 * write(2) as these bytes: a string made of pieces would be flattened and encoded to UTF-8
 * again by every write, which costs a line more than putting its bytes here (bench/sink.bench.ts).
 * @internal
 */
export class LineBytes {
  buf: Buffer;
  length = 0;

  constructor(capacity: number) {
    // Under 4 KiB Node cuts the buffer from a shared slab: a sink per run then costs no
    // allocation of memory of its own (measured: a 16 KiB buffer per run cost a batch µs).
    this.buf = Buffer.allocUnsafe(capacity);
  }

  /** The buffer, with room for `extra` more bytes after `length`. */
  room(extra: number): Buffer {
    const need = this.length + extra;
    if (need <= this.buf.length) return this.buf;
    const grown = Buffer.allocUnsafe(Math.max(need, this.buf.length * 2));
    this.buf.copy(grown, 0, 0, this.length);
    this.buf = grown;
    return grown;
  }

  /** Appends bytes. */
  bytes(src: Uint8Array): void {
    this.room(src.length).set(src, this.length);
    this.length += src.length;
  }

  /** Appends a string as UTF-8. */
  text(value: string): void {
    const buf = this.room(value.length * 3);
    this.length += buf.write(value, this.length, 'utf8');
  }
}
