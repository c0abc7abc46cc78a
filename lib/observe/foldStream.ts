import { SseDecoder } from './SseDecoder';
import type { StreamFold } from './WireFormat';

/** A streamed answer's body as `foldStream` hands it on, and what its fold came to. */
export interface FoldedStream {
  /** The same bytes, for the SDK. */
  readonly handedOn: ReadableStream<Uint8Array>;
  /** The fold's end (`StreamFold.end`), or its first error: the stream's, a cut, an event not JSON. */
  readonly folded: Promise<unknown>;
}

/**
 * Reads a streamed answer once for both the metering and the SDK: each chunk is handed on and
 * its events folded as it arrives, where a tee would clone it into a second stream read with an
 * await per event (the `meter` bench's target). As with a tee, the answer is read to its end
 * whatever the SDK does: one that stops reading still leaves it metered whole; and a fold that
 * failed (the stream cut at its bound) stops folding, not the bytes handed on.
 */
export function foldStream(body: ReadableStream<Uint8Array>, fold: StreamFold): FoldedStream {
  const reader = body.getReader();
  // Undefined once the SDK cancelled its stream: the answer is still read, for the metering.
  let out: ReadableStreamDefaultController<Uint8Array> | undefined;
  const handedOn = new ReadableStream<Uint8Array>({
    start(controller) {
      out = controller;
    },
    cancel() {
      out = undefined;
    },
  });
  const folded = new Promise<unknown>((resolve, reject) => {
    const decoder = new SseDecoder();
    // Once the fold ended or failed: later chunks are handed on only.
    let settled = false;
    const fail = (error: unknown): void => {
      settled = true;
      reject(error);
    };
    const end = (): void => {
      try {
        resolve(fold.end());
      } catch (error) {
        reject(error);
      }
      settled = true;
    };
    const take = (event: unknown): void => fold.event(event);
    void (async () => {
      for (;;) {
        let chunk: Awaited<ReturnType<typeof reader.read>>;
        try {
          chunk = await reader.read();
        } catch (error) {
          // Dropped, or aborted (by the caller, or the cut at the bound); whole if only its end marker was lost.
          if (!settled) {
            if (fold.whole === true) end();
            else fail(error);
          }
          out?.error(error);
          return;
        }
        if (chunk.done) break;
        out?.enqueue(chunk.value);
        if (settled) continue;
        try {
          decoder.push(chunk.value, take);
        } catch (error) {
          fail(error);
          continue;
        }
        // A stream that said it ended is whole, whether or not the transport then closes cleanly
        // (an SDK that stops reading aborts its request, maybe before the close came).
        if (decoder.done) end();
      }
      if (!settled) {
        try {
          decoder.end(take);
        } catch (error) {
          fail(error);
        }
        if (!settled) end();
      }
      out?.close();
    })();
  });
  return { handedOn, folded };
}
