/**
 * Server-sent events decoded as their bytes arrive: each chunk is decoded once and the JSON data
 * of every event it completes is handed on at once, with no await between events (the `meter`
 * bench's target: 2,000 events an answer, each await a promise the run's async context hooks).
 * An event's `data:` lines are joined; the `[DONE]` that ends a Chat Completions stream, comments
 * and events without data are left out. Lines end in `\n`, `\r\n` or `\r`, as the SSE format
 * allows. An event whose data is not JSON is an error: the stream is not one of a model API.
 */
export class SseDecoder {
  readonly #decoder = new TextDecoder();
  #buffered = '';
  /** A `\r` that ended a chunk: the next may begin with the `\n` of the same line end. */
  #pendingCR = false;
  #done = false;

  /** Whether the stream said it ended (`data: [DONE]`, Chat Completions'): nothing more comes. */
  get done(): boolean {
    return this.#done;
  }

  /** Takes a chunk of the stream and hands `onEvent` the data of each event it completes, in order. */
  push(bytes: Uint8Array, onEvent: (data: unknown) => void): void {
    this.#take(this.#decoder.decode(bytes, { stream: true }), false, onEvent);
  }

  /** The stream ended: hands on its last event, when it ended without its blank line. */
  end(onEvent: (data: unknown) => void): void {
    this.#take(this.#decoder.decode(), true, onEvent);
  }

  #take(decoded: string, done: boolean, onEvent: (data: unknown) => void): void {
    let text = this.#pendingCR ? `\r${decoded}` : decoded;
    this.#pendingCR = !done && text.endsWith('\r');
    if (this.#pendingCR) text = text.slice(0, -1);
    // Providers end lines with `\n`; the other endings are rewritten to it.
    if (text.includes('\r')) text = text.replace(/\r\n?/g, '\n');
    const buffered = this.#buffered === '' ? text : this.#buffered + text;
    // Events end at a blank line: scanned with indexOf, not split.
    let start = 0;
    for (let end = buffered.indexOf('\n\n'); end !== -1; end = buffered.indexOf('\n\n', start)) {
      const data = dataOf(buffered.slice(start, end));
      start = end + 2;
      if (data === '[DONE]') this.#done = true;
      else if (data !== '') onEvent(JSON.parse(data));
    }
    this.#buffered = start === 0 ? buffered : buffered.slice(start);
    if (done) {
      const data = dataOf(this.#buffered);
      this.#buffered = '';
      if (data !== '' && data !== '[DONE]') onEvent(JSON.parse(data));
    }
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
