import type { MirroredTool } from 'agent-state-machine';
import type { AISDKRun } from './AISDKRun';

type Execute = (this: unknown, input: unknown, ctx: { toolCallId: string }) => unknown;

/** Whether `execute` is an `async function*`: the SDK hands on each output it yields as a preliminary result. */
export function isStreamedTool(execute: unknown): boolean {
  return Object.prototype.toString.call(execute) === '[object AsyncGeneratorFunction]';
}

/**
 * An `async *execute` through the mirror, streamed as the SDK streams it: each output the tool
 * yields is yielded on at once (the SDK's preliminary results), and its last is the result the
 * mirror records. A call served from the journal yields its recorded result once; a refused or
 * failed call throws, as a tool that is not streamed does.
 */
export function streamedTool(
  run: AISDKRun,
  name: string,
  tool: { execute: Execute },
  how: MirroredTool<unknown>,
): (input: unknown, ctx: { toolCallId: string }) => AsyncGenerator<unknown> {
  return async function* (input, ctx) {
    if (run.streaming !== undefined) await run.streaming;
    const parts: unknown[] = [];
    let wake: (() => void) | undefined;
    let finished = false;
    // The SDK stopped reading (`return()`): the tool is stopped at its next output, and its call
    // recorded as failed, as the SDK answered it.
    let stopped = false;
    let ran = false;
    const ended = run.mirror
      .tool(
        { id: ctx.toolCallId, name, input },
        async () => {
          ran = true;
          let last: unknown;
          // On the tool, as the SDK calls it.
          for await (const part of tool.execute(input, ctx) as AsyncIterable<unknown>) {
            if (stopped) throw new Error('stopped: the AI SDK stopped reading the outputs of this tool call');
            last = part;
            parts.push(part);
            wake?.();
          }
          return last;
        },
        how,
      )
      .finally(() => {
        finished = true;
        wake?.();
      });
    // Awaited below; a rejection is not left unhandled while the parts are yielded.
    ended.catch(() => undefined);
    try {
      for (;;) {
        while (parts.length > 0) yield parts.shift();
        if (finished) break;
        await new Promise<void>((resolve) => (wake = resolve));
        wake = undefined;
      }
    } finally {
      if (!finished) stopped = true;
    }
    const value = await ended;
    if (!ran) yield value;
  };
}

/**
 * What a tool that is not an `async function*` gave: an async iterable it returned as it is is
 * read to its last output, the result; anything else (a promise, even of a stream) as it is.
 */
export async function lastOutput(value: unknown): Promise<unknown> {
  if (typeof (value as AsyncIterable<unknown> | null)?.[Symbol.asyncIterator] !== 'function') return value;
  let last: unknown;
  for await (const part of value as AsyncIterable<unknown>) last = part;
  return last;
}
