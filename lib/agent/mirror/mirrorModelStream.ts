import type { MirrorCallFlags } from './MirrorCallFlags';
import type { MirrorResponse } from './MirrorOutcomes';
import {
  checkModelCall,
  failed,
  refuse,
  startModelCall,
  type MirroredModelStart,
  type MirrorModelSteps,
} from './mirrorModel';

/**
 * A framework's streamed model call as `StepMirror.modelStream` takes it: how to open the
 * stream, how its parts are read as they pass, and how a journaled response is given back as
 * the framework's own streamed answer (`served`).
 */
export interface MirroredModelStream<R, P> extends MirroredModelStart<R> {
  /**
   * Opens the stream (as `MirroredModelCall.send` makes a request): a rejection is the call's
   * failure. A failure while its parts are read is one too, until the answer is whole.
   */
  send: (flags: MirrorCallFlags) => PromiseLike<R>;
  /** The answer's parts, as the framework would read them. */
  parts: (answer: R) => AsyncIterable<P>;
  /** The answer handed on to the framework with `parts` in place of its own (the same parts, read as they pass). */
  withParts: (answer: R, parts: AsyncIterable<P>) => R;
  /**
   * Reads each part before the framework gets it, until the answer is whole: the response, once
   * this part completes it (charged then; a refusal is thrown in the part's place); `{ failed }`,
   * when the part says the call failed (reported as it is, a provider's error object too; the
   * part still passes); else undefined. What it throws cuts the call (a bound passed, a tool
   * call nobody may run): reported as its failure, and thrown to the framework in the part's place.
   */
  read: (part: P) => MirrorResponse | { failed: unknown } | undefined;
  /** Called once when the call is over: its stream read to the end or given up, or its `send` failed. */
  settled?: () => void;
}

/**
 * One streamed model call of a framework, through the mirror (`StepMirror.modelStream`): a
 * resumed run's journaled response is served; otherwise the call is gated, opened, and each of
 * its parts read as it passes, so that the answer is charged and journaled once it is whole, or
 * its failure reported once. A stream that ends before its answer is whole reports nothing: the
 * attempt stays in flight and the run's end charges it at its hold.
 */
export async function mirrorModelStream<R, P>(steps: MirrorModelSteps, call: MirroredModelStream<R, P>): Promise<R> {
  checkModelCall(call, 'StepMirror.modelStream', ['send', 'parts', 'withParts', 'read'], ['settled']);
  const started = await startModelCall(steps, call);
  if ('served' in started) return started.served;
  let answer: R;
  try {
    answer = await call.send(started.flags);
  } catch (error) {
    call.settled?.();
    throw failed(steps, call, error, error);
  }
  return call.withParts(answer, readParts(steps, call, call.parts(answer)));
}

async function* readParts<R, P>(
  steps: MirrorModelSteps,
  call: MirroredModelStream<R, P>,
  parts: AsyncIterable<P>,
): AsyncGenerator<P> {
  // Whether the call's end (its response or its failure) was reported: once, then parts pass unread.
  let reported = false;
  try {
    for await (const part of parts) {
      if (!reported) {
        const read = call.read(part);
        if (read !== undefined) reported = true;
        if (read !== undefined && 'failed' in read) failed(steps, call, read.failed, read.failed);
        else if (read !== undefined) {
          const ended = steps.modelResponse(read);
          if (ended !== undefined) refuse(call, ended);
        }
      }
      yield part;
    }
  } catch (error) {
    // Past the answer's end, a failure is the framework's own: the call's end was reported.
    throw reported ? error : failed(steps, call, error, error);
  } finally {
    call.settled?.();
  }
}
