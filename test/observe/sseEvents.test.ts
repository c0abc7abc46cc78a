import fc from 'fast-check';
import { sseEvents } from '../../lib/observe/sseEvents';

/** A body that sends `text` in the pieces `cuts` makes (byte offsets). */
function bodyOf(text: string, cuts: readonly number[]): ReadableStream<Uint8Array> {
  const bytes = new TextEncoder().encode(text);
  const at = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
  const pieces: Uint8Array[] = [];
  let from = 0;
  for (const cut of [...at, bytes.length]) {
    pieces.push(bytes.slice(from, cut));
    from = cut;
  }
  return new ReadableStream({
    start(controller) {
      for (const piece of pieces) controller.enqueue(piece);
      controller.close();
    },
  });
}

async function eventsOf(text: string, cuts: readonly number[] = []): Promise<unknown[]> {
  const events: unknown[] = [];
  for await (const event of sseEvents(bodyOf(text, cuts))) events.push(event);
  return events;
}

describe('sseEvents: the JSON data of each event of a server-sent stream', () => {
  it('reads events however the stream is cut, with any line ending the format allows', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.record({ n: fc.integer(), s: fc.string() }), { maxLength: 6 }),
        fc.constantFrom('\n', '\r\n', '\r'),
        fc.array(fc.nat(400), { maxLength: 8 }),
        async (events, eol, cuts) => {
          // Data over several lines too: one `data:` line per line of indented JSON.
          const data = (e: unknown, i: number): string =>
            (i % 2 === 0 ? JSON.stringify(e) : JSON.stringify(e, null, 1))
              .split('\n')
              .map((line) => `data: ${line}${eol}`)
              .join('');
          const text = events.map((e, i) => `event: x${eol}${data(e, i)}${eol}`).join('');
          expect(await eventsOf(`${text}data: [DONE]${eol}${eol}`, cuts)).toEqual(events);
        },
      ),
    );
  });

  it("joins an event's data lines, skips comments, and reads a last event that lacks its blank line", async () => {
    const text = ': a comment\n\ndata: {"a":\ndata: 1}\n\ndata: {"b":2}';
    expect(await eventsOf(text, [5, 19, 20])).toEqual([{ a: 1 }, { b: 2 }]);
  });

  it('refuses data that is not JSON: the stream is not one of a model API', async () => {
    await expect(eventsOf('data: <html>\n\n')).rejects.toThrow(SyntaxError);
  });
});
