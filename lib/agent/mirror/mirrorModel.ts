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
   * Makes the request (the framework's own call, retries and all). `flags`: what the call must
   * carry when the integration honours a budget's `wrapUp` or `visible` (`MirrorCallFlags`);
   * empty otherwise.
   */
  send: (flags: MirrorCallFlags) => PromiseLike<R>;
  /** What the mirror reads of the answer: its text, tool calls, usage and model. */
  read: (answer: R) => MirrorResponse;
  /** A resumed run's journaled response, as the framework's answer (no request is made). */
  served: (recorded: MirrorResponse) => R | Promise<R>;
  /**
   * The bound (`{ inputTokens, maxOutputTokens, model? }`) of the request as it would be sent
   * with `flags`, or why it has none: asked only when the mirror needs it (`needsBound`: a
   * strict or external dollar cap, pricing, the ledger, a final call). Left out, a strict cap
   * refuses the call.
   */
  bound?: (flags: MirrorCallFlags) => LLMCallBound | string | undefined;
  /** Reports a failed send instead of the mirror's `modelCallFailed(error)` (to say whether the framework retries it). */
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

const MODEL_CALL_KEYS: ReadonlySet<string> = new Set(['send', 'read', 'served', 'bound', 'failed', 'refuse']);

/** Why a call has no bound when its integration gives none. */
const NO_BOUND = 'the integration gives no bound of its calls (StepMirror.model({ bound }))';

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
  const { bound } = call;
  const planned = await steps.modelCallPlan((flags) => bound?.(flags) ?? NO_BOUND);
  if (planned instanceof Error) refuse(call, planned);
  let answer: R;
  try {
    answer = await call.send(planned);
  } catch (error) {
    // Whether the framework tries again is its own: the next call through here is its retry.
    throw failed(steps, call, error);
  }
  let response: MirrorResponse;
  try {
    response = call.read(answer);
  } catch (error) {
    // Answered but unreadable: its usage unknown, it is held at its worst case, as a failure is.
    throw failed(steps, call, error);
  }
  const ended = steps.modelResponse(response);
  if (ended !== undefined) refuse(call, ended);
  return answer;
}

/** Reports `error` as the call's failure (by the integration's hook when it has one); returns it to throw. */
function failed<R>(steps: MirrorModelSteps, call: MirroredModelCall<R>, error: unknown): unknown {
  if (call.failed === undefined) steps.modelCallFailed(error);
  else call.failed(error);
  return error;
}

function refuse<R>(call: MirroredModelCall<R>, stop: MirrorStop): never {
  call.refuse?.(stop);
  throw stop;
}

function checkCall<R>(call: MirroredModelCall<R>): void {
  if (typeof call !== 'object' || call === null)
    throw new InvalidArgumentError('call', 'an object { send, read, served, bound?, failed?, refuse? }', call);
  for (const key of Object.keys(call))
    if (!MODEL_CALL_KEYS.has(key))
      throw new InvalidArgumentError(
        `call.${key}`,
        'left out: StepMirror.model takes send, read, served, bound, failed and refuse',
        call,
      );
  for (const key of ['send', 'read', 'served'] as const)
    if (typeof call[key] !== 'function') throw new InvalidArgumentError(`call.${key}`, 'a function', call[key]);
  for (const key of ['bound', 'failed', 'refuse'] as const)
    if (call[key] !== undefined && typeof call[key] !== 'function')
      throw new InvalidArgumentError(`call.${key}`, 'a function, or left out', call[key]);
}
