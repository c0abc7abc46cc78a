/**
 * `parts` as a web stream, read as the stream is pulled. Cancelling it calls `cancelSource`
 * first (a read waiting on the source ends there, rather than when its next part comes), then
 * returns the iterator (a generator's `finally` runs). `ReadableStream.from` does the rest from
 * Node 20.6; this keeps the library's floor at Node 20.0.
 */
export function readableOf<T>(parts: AsyncIterable<T>, cancelSource?: (reason: unknown) => unknown): ReadableStream<T> {
  const iterator = parts[Symbol.asyncIterator]();
  let cancelled = false;
  return new ReadableStream<T>({
    async pull(controller) {
      const next = await iterator.next();
      // A read that ended because the stream was cancelled has no one to hand its end to.
      if (cancelled) return;
      if (next.done === true) controller.close();
      else controller.enqueue(next.value);
    },
    async cancel(reason) {
      cancelled = true;
      await cancelSource?.(reason);
      await iterator.return?.();
    },
  });
}
