import { messageOf } from '../../internal/messageOf';
import { InvalidArgumentError } from '../../machine/InvalidArgumentError';
import type { LLMCallBound } from '../AgentLoop';
import type { MirrorBoundOf, MirrorCallFlags } from './MirrorCallFlags';
import type { MirrorResponse } from './MirrorOutcomes';
import type { MirrorStop } from './MirrorStop';

/**
 * A framework's model call as `StepMirror.model` takes it: how to make it, what the mirror reads
 * of its answer, and how a journaled response is given back in the framework's own shape.
 */
export interface MirroredModelCall<R> {
  /**
   * Makes one request. `flags`: what the call must carry when the integration honours a
   * budget's `wrapUp` or `visible` (`MirrorCallFlags`); empty otherwise. A retry is another
   * `model()` call (the framework's own retries off), or, made inside `send`, each one gated
   * and reported by the integration (`modelCallStart`, `modelCallFailed(error, { willRetry })`):
   * otherwise the requests it makes are charged as one.
   */
  send: (flags: MirrorCallFlags) => PromiseLike<R>;
  /** What the mirror reads of the answer: its text, tool calls, usage and model. */
  read: (answer: R) => MirrorResponse;
  /** A resumed run's journaled response, as the framework's answer (no request is made). */
  served: (recorded: MirrorResponse) => R | Promise<R>;
  /**
   * Work the call needs before it is gated that sends nothing (resolving the model by name):
   * run only when the call is not served; what it throws is thrown as it is, nothing charged.
   */
  prepare?: () => PromiseLike<void> | void;
  /**
   * The bound (`{ inputTokens, maxOutputTokens, model? }`) of the request as it would be sent
   * with `flags`, or why it has none: asked only when the mirror needs it (`needsBound`: a
   * strict or external dollar cap, pricing, the ledger, `wrapUp`). Left out, a strict cap
   * refuses the call.
   */
  bound?: (flags: MirrorCallFlags) => LLMCallBound | string;
  /**
   * Reports a failed send, or an answer `read` could not read, instead of the mirror's
   * `modelCallFailed(error)`: to say whether the framework retries it.
   */
  failed?: (error: unknown) => void;
  /** Stops the framework with the mirror's reason (a spent budget, a cancel); must throw. Default: throws it. */
  refuse?: (stop: MirrorStop) => never;
}

/** The steps of a model call that `mirrorModel` sequences (StepMirror's). */
export interface MirrorModelSteps {
  recordedResponse(): MirrorResponse | undefined;
  modelCallPlan(boundOf: MirrorBoundOf): Promise<MirrorStop | MirrorCallFlags>;
  modelCallFailed(error: unknown): void;
  modelResponse(response: MirrorResponse): MirrorStop | undefined;
}

const MODEL_CALL_KEYS: ReadonlySet<string> = new Set([
  'send',
  'read',
  'served',
  'prepare',
  'bound',
  'failed',
  'refuse',
]);

/** Why a call has no bound when its integration gives none. */
const NO_BOUND = 'the integration gives no bound of its calls (StepMirror.model({ bound }))';

/**
 * An answer that came back but could not be read: reported as such, so that no rule takes it
 * for a request that never left or was not billed (the reader's error may carry a status or a
 * connection code of its own). Held at its worst case, as uncertain.
 */
class UnreadableAnswerError extends Error {
  override readonly name = 'UnreadableAnswerError';
}

/**
 * One model call of a framework, through the mirror (`StepMirror.model`): a resumed run's
 * journaled response is served; otherwise the call is gated (its worst case held against a
 * strict cap, refused when a budget is spent or the run cancelled), sent, and its answer
 * charged and journaled, or its failure reported. An integration tells the mirror its model's
 * calls here and sequences none of the steps itself.
 */
export async function mirrorModel<R>(steps: MirrorModelSteps, call: MirroredModelCall<R>): Promise<R> {
  checkCall(call);
  const recorded = steps.recordedResponse();
  if (recorded !== undefined) return call.served(recorded);
  if (call.prepare !== undefined) await call.prepare();
  const { bound } = call;
  const planned = await steps.modelCallPlan(bound === undefined ? () => NO_BOUND : bound);
  if (planned instanceof Error) refuse(call, planned);
  let answer: R;
  try {
    answer = await call.send(planned);
  } catch (error) {
    throw failed(steps, call, error, error);
  }
  let response: MirrorResponse;
  try {
    response = call.read(answer);
  } catch (error) {
    const unreadable = new UnreadableAnswerError(`the answer came back but could not be read: ${messageOf(error)}`);
    throw failed(steps, call, unreadable, error);
  }
  const ended = steps.modelResponse(response);
  if (ended !== undefined) refuse(call, ended);
  return answer;
}

/**
 * Reports `reported` as the call's failure, by the integration's hook when it has one (one that
 * throws is set aside for the mirror's own report: the call's hold must end); returns `thrown`,
 * what the framework gets.
 */
function failed<R>(steps: MirrorModelSteps, call: MirroredModelCall<R>, reported: unknown, thrown: unknown): unknown {
  if (call.failed === undefined) steps.modelCallFailed(reported);
  else
    try {
      call.failed(reported);
    } catch {
      steps.modelCallFailed(reported);
    }
  return thrown;
}

function refuse<R>(call: MirroredModelCall<R>, stop: MirrorStop): never {
  call.refuse?.(stop);
  throw stop;
}

function checkCall<R>(call: MirroredModelCall<R>): void {
  if (typeof call !== 'object' || call === null)
    throw new InvalidArgumentError(
      'call',
      'an object { send, read, served, prepare?, bound?, failed?, refuse? }',
      call,
    );
  for (const key of Object.keys(call))
    if (!MODEL_CALL_KEYS.has(key))
      throw new InvalidArgumentError(
        `call.${key}`,
        'left out: StepMirror.model takes send, read, served, prepare, bound, failed and refuse',
        (call as unknown as Record<string, unknown>)[key],
      );
  for (const key of ['send', 'read', 'served'] as const)
    if (typeof call[key] !== 'function') throw new InvalidArgumentError(`call.${key}`, 'a function', call[key]);
  for (const key of ['prepare', 'bound', 'failed', 'refuse'] as const)
    if (call[key] !== undefined && typeof call[key] !== 'function')
      throw new InvalidArgumentError(`call.${key}`, 'a function, or left out', call[key]);
}
