import type { MirrorCallFlags } from './MirrorCallFlags';
import type { MirrorResponse } from './MirrorOutcomes';
import {
  checkModelCall,
  failed,
  modelCallShape,
  refuse,
  sendModelCall,
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
   * Reads each part before the framework gets it: the response, once this part makes the answer
   * whole (charged then; a refusal is thrown in the part's place); `{ failed }`, when the part
   * says the call failed (reported as it came, a provider's error object too; the part still
   * passes); else undefined. Once the call's end is reported, what it gives is not looked at, but
   * it still reads every part: what it throws cuts the call (a bound passed, a tool call nobody
   * may run), reported as the call's failure if its end was not, and thrown to the framework in
   * the part's place.
   */
  read: (part: P) => MirrorResponse | { failed: unknown } | undefined;
  /**
   * Called once when an opened call is over (its stream read to the end, broken, cut, or given up
   * by the framework once it asked for a part), or when its `send` failed. What it throws is
   * ignored: the call's own outcome stands.
   */
  settled?: () => void;
}

const MODEL_STREAM = modelCallShape('StepMirror.modelStream', ['send', 'parts', 'withParts', 'read'], ['settled']);

/**
 * One streamed model call of a framework, through the mirror (`StepMirror.modelStream`): a
 * resumed run's journaled response is served; otherwise the call is gated, opened, and each of
 * its parts read as it passes, so that the answer is charged and journaled once it is whole, or
 * its failure reported once. A stream that ends before its answer is whole reports nothing: the
 * attempt stays in flight and the run's end charges it at its hold.
 */
export async function mirrorModelStream<R, P>(steps: MirrorModelSteps, call: MirroredModelStream<R, P>): Promise<R> {
  checkModelCall(call, MODEL_STREAM);
  const started = await startModelCall(steps, call);
  if ('served' in started) return started.served;
  const answer = await sendModelCall(steps, call, started.flags, () => settle(call));
  try {
    return call.withParts(answer, readParts(steps, call, call.parts(answer)));
  } catch (error) {
    // Opened, and not handed on: a failure of the call, which may have been billed.
    const thrown = failed(steps, call, error, error);
    settle(call);
    throw thrown;
  }
}

/** The integration's `settled`, whose own failure must not replace the call's outcome. */
function settle<R, P>(call: MirroredModelStream<R, P>): void {
  try {
    call.settled?.();
  } catch {
    // The call's outcome stands; `settled` only lets go of the integration's own watchers.
  }
}

async function* readParts<R, P>(
  steps: MirrorModelSteps,
  call: MirroredModelStream<R, P>,
  parts: AsyncIterable<P>,
): AsyncGenerator<P> {
  // Whether the call's end (its response or its failure) was reported: once, then what read gives is not looked at.
  let reported = false;
  try {
    for await (const part of parts) {
      const read = call.read(part);
      if (!reported && read !== undefined) {
        reported = true;
        if ('failed' in read) failed(steps, call, read.failed, read.failed);
        else {
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
    settle(call);
  }
}
