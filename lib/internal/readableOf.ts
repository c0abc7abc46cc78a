/**
 * `parts` as a web stream, read as the stream is pulled: cancelling the stream returns the
 * iterator (a generator's `finally` runs). `ReadableStream.from` does this from Node 20.6; this
 * keeps the library's floor at Node 20.0.
 */
export function readableOf<T>(parts: AsyncIterable<T>): ReadableStream<T> {
  const iterator = parts[Symbol.asyncIterator]();
  return new ReadableStream<T>({
    async pull(controller) {
      const next = await iterator.next();
      if (next.done === true) controller.close();
      else controller.enqueue(next.value);
    },
    async cancel(reason) {
      await iterator.return?.(reason);
    },
  });
}
