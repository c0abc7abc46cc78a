import { SseDecoder } from './SseDecoder';

/**
 * The JSON data of each server-sent event of `body`, in order, as `SseDecoder` reads them: for a
 * reader that folds events with `for await`.
 */
export async function* sseEvents(body: ReadableStream<Uint8Array>): AsyncGenerator<unknown> {
  const decoder = new SseDecoder();
  const events: unknown[] = [];
  const take = (event: unknown): void => void events.push(event);
  const reader = body.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      let bad: { error: unknown } | undefined;
      try {
        if (done) decoder.end(take);
        else decoder.push(value, take);
      } catch (error) {
        // The events before the one that is not JSON are read first.
        bad = { error };
      }
      yield* events.splice(0);
      if (bad !== undefined) throw bad.error;
      if (done) return;
    }
  } finally {
    reader.releaseLock();
  }
}
