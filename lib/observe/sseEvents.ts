/**
 * The JSON data of each server-sent event of `body`, in order (an event's `data:` lines joined;
 * the `[DONE]` that ends a Chat Completions stream, comments and events without data left out).
 * An event whose data is not JSON is an error: the stream is not one of a model API.
 */
export async function* sseEvents(body: ReadableStream<Uint8Array>): AsyncGenerator<unknown> {
  const decoder = new TextDecoder();
  let buffered = '';
  const reader = body.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      buffered += done ? decoder.decode() : decoder.decode(value, { stream: true });
      const events = buffered.split(/\r?\n\r?\n|\r\r/);
      buffered = done ? '' : events.pop()!;
      for (const event of events) {
        const data = dataOf(event);
        if (data === '' || data === '[DONE]') continue;
        yield JSON.parse(data) as unknown;
      }
      if (done) return;
    }
  } finally {
    reader.releaseLock();
  }
}

/** An event's data: its `data:` lines joined. One line of `data: …` alone, the usual event, is read without a split (the bench's `meter` target). */
function dataOf(event: string): string {
  if (event.startsWith('data: ') && !event.includes('\n') && !event.includes('\r')) return event.slice(6);
  return event
    .split(/\r?\n|\r/)
    .filter((line) => line.startsWith('data:'))
    .map((line) => line.slice(line.startsWith('data: ') ? 6 : 5))
    .join('\n');
}
