/**
 * The parts of a web stream, read through `reader` (taken by the caller, so that it can cancel
 * the stream while a read waits: the read then ends as done). The lock is let go at the end.
 */
export async function* readerParts<T>(reader: ReadableStreamDefaultReader<T>): AsyncGenerator<T> {
  try {
    for (;;) {
      const next = await reader.read();
      if (next.done) return;
      yield next.value;
    }
  } finally {
    reader.releaseLock();
  }
}
