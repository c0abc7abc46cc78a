/**
 * The JSON data of each server-sent event of `body`, in order (an event's `data:` lines joined;
 * the `[DONE]` that ends a Chat Completions stream, comments and events without data left out).
 * Lines end in `\n`, `\r\n` or `\r`, as the SSE format allows. An event whose data is not JSON
 * is an error: the stream is not one of a model API.
 */
export async function* sseEvents(body: ReadableStream<Uint8Array>): AsyncGenerator<unknown> {
  const decoder = new TextDecoder();
  let buffered = '';
  // A `\r` that ended a chunk: the next may begin with the `\n` of the same line end.
  let pendingCR = false;
  const reader = body.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      let text = done ? decoder.decode() : decoder.decode(value, { stream: true });
      if (pendingCR) text = `\r${text}`;
      pendingCR = !done && text.endsWith('\r');
      if (pendingCR) text = text.slice(0, -1);
      // Providers end lines with `\n`; the other endings are rewritten to it.
      if (text.includes('\r')) text = text.replace(/\r\n?/g, '\n');
      buffered += text;
      // Events end at a blank line: scanned with indexOf, the bench's `meter` target (2,000 events an answer).
      let start = 0;
      for (let end = buffered.indexOf('\n\n'); end !== -1; end = buffered.indexOf('\n\n', start)) {
        const data = dataOf(buffered.slice(start, end));
        start = end + 2;
        if (data !== '' && data !== '[DONE]') yield JSON.parse(data) as unknown;
      }
      buffered = buffered.slice(start);
      if (done) {
        // The last event, when the stream ended without its blank line.
        const data = dataOf(buffered);
        if (data !== '' && data !== '[DONE]') yield JSON.parse(data) as unknown;
        return;
      }
    }
  } finally {
    reader.releaseLock();
  }
}

/** An event's data: its `data:` lines joined. One line of `data: …` alone, the usual event, is read without a split. */
function dataOf(event: string): string {
  if (event.startsWith('data: ') && !event.includes('\n')) return event.slice(6);
  return event
    .split('\n')
    .filter((line) => line.startsWith('data:'))
    .map((line) => line.slice(line.startsWith('data: ') ? 6 : 5))
    .join('\n');
}
