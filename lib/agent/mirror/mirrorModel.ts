import { messageOf } from '../../internal/messageOf';
import { InvalidArgumentError } from '../../machine/InvalidArgumentError';
import type { LLMCallBound } from '../AgentLoop';
import type { MirrorBoundOf, MirrorCallFlags } from './MirrorCallFlags';
import type { MirrorResponse } from './MirrorOutcomes';
import type { MirrorStop } from './MirrorStop';

/**
 * What every model call of a framework tells the mirror, streamed or not: how a journaled
 * response is given back in the framework's own shape, and the hooks around the request.
 */
export interface MirroredModelStart<R> {
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
   * Reports the call's failure instead of the mirror's `modelCallFailed(error)`, to say whether
   * the framework retries it: a failed send, an answer the mirror could not read, and for a
   * stream an error part, a break or a cut.
   */
  failed?: (error: unknown) => void;
  /** Stops the framework with the mirror's reason (a spent budget, a cancel); must throw. Default: throws it. */
  refuse?: (stop: MirrorStop) => never;
}

/**
 * A framework's model call as `StepMirror.model` takes it: how to make it, what the mirror reads
 * of its answer, and how a journaled response is given back in the framework's own shape.
 */
export interface MirroredModelCall<R> extends MirroredModelStart<R> {
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
}

/** The steps of a model call that `mirrorModel` sequences (StepMirror's). */
export interface MirrorModelSteps {
  recordedResponse(): MirrorResponse | undefined;
  modelCallPlan(boundOf: MirrorBoundOf): Promise<MirrorStop | MirrorCallFlags>;
  modelCallFailed(error: unknown): void;
  modelResponse(response: MirrorResponse): MirrorStop | undefined;
}

/** Why a call has no bound when its integration gives none. */
const NO_BOUND = 'the integration gives no bound of its calls (StepMirror.model({ bound }))';
const noBound = (): string => NO_BOUND;

/**
 * An answer that came back but could not be read: reported as such, so that no rule takes it
 * for a request that never left or was not billed (the reader's error may carry a status or a
 * connection code of its own). Held at its worst case, as uncertain.
 */
export class UnreadableAnswerError extends Error {
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
  checkModelCall(call, MODEL_CALL);
  // The steps of startModelCall and sendModelCall, written out: the mirror step's path, where
  // each async layer costs (the turncore bench's mirror step).
  const recorded = steps.recordedResponse();
  if (recorded !== undefined) return call.served(recorded);
  if (call.prepare !== undefined) await call.prepare();
  const planned = await steps.modelCallPlan(call.bound ?? noBound);
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
 * The start of a streamed call: a resumed run's journaled response served; else the work the
 * call needs done (`prepare`), and the call gated. Resolves to the served answer, or to the
 * flags the request must carry; a refusal is thrown by the integration's `refuse`. `mirrorModel`
 * writes the same steps out: keep the two in step.
 */
export async function startModelCall<R>(
  steps: MirrorModelSteps,
  call: MirroredModelStart<R>,
): Promise<{ served: R } | { flags: MirrorCallFlags }> {
  const recorded = steps.recordedResponse();
  if (recorded !== undefined) return { served: await call.served(recorded) };
  if (call.prepare !== undefined) await call.prepare();
  const planned = await steps.modelCallPlan(call.bound ?? noBound);
  if (planned instanceof Error) refuse(call, planned);
  return { flags: planned };
}

/**
 * Sends a streamed call (`call.send`): its failure is reported, `after` called (its watchers let
 * go), and the failure thrown. `mirrorModel` writes the same steps out: keep the two in step.
 */
export async function sendModelCall<R>(
  steps: MirrorModelSteps,
  call: MirroredModelStart<R> & { send: (flags: MirrorCallFlags) => PromiseLike<R> },
  flags: MirrorCallFlags,
  after?: () => void,
): Promise<R> {
  try {
    return await call.send(flags);
  } catch (error) {
    const thrown = failed(steps, call, error, error);
    after?.();
    throw thrown;
  }
}

/**
 * Reports `reported` as the call's failure, by the integration's hook when it has one (one that
 * throws is set aside for the mirror's own report: the call's hold must end); returns `thrown`,
 * what the framework gets.
 */
export function failed<R>(
  steps: MirrorModelSteps,
  call: MirroredModelStart<R>,
  reported: unknown,
  thrown: unknown,
): unknown {
  if (call.failed === undefined) steps.modelCallFailed(reported);
  else
    try {
      call.failed(reported);
    } catch {
      steps.modelCallFailed(reported);
    }
  return thrown;
}

export function refuse<R>(call: MirroredModelStart<R>, stop: MirrorStop): never {
  call.refuse?.(stop);
  throw stop;
}

/** The keys a one-step call object takes: made once per method, since every model call is checked against them. */
export interface ModelCallShape {
  method: string;
  /** The functions it needs. */
  required: readonly string[];
  /** The hooks it may have. */
  hooks: readonly string[];
  keys: ReadonlySet<string>;
}

/** The shape of `method`'s call objects: `own` (the functions it needs beside `served`) and the hooks beside the shared ones. */
export function modelCallShape(
  method: string,
  own: readonly string[],
  optional: readonly string[] = [],
): ModelCallShape {
  const required = [...own, 'served'];
  const hooks = ['prepare', 'bound', 'failed', 'refuse', ...optional];
  return { method, required, hooks, keys: new Set([...required, ...hooks]) };
}

const MODEL_CALL = modelCallShape('StepMirror.model', ['send', 'read']);

/** Refuses, by name, a call that is not an object of `shape`'s keys with functions at them. */
export function checkModelCall(call: unknown, shape: ModelCallShape): void {
  const { method, required, hooks, keys } = shape;
  if (typeof call !== 'object' || call === null)
    throw new InvalidArgumentError('call', `an object { ${required.join(', ')}, ${hooks.join('?, ')}? }`, call);
  const given = call as Record<string, unknown>;
  // for…in, not Object.keys: no array made on every call (the mirror step's path).
  for (const key in given)
    if (Object.hasOwn(given, key) && !keys.has(key)) {
      const all = [...keys];
      throw new InvalidArgumentError(
        `call.${key}`,
        `left out: ${method} takes ${all.slice(0, -1).join(', ')} and ${all[all.length - 1]}`,
        given[key],
      );
    }
  for (const key of required)
    if (typeof given[key] !== 'function') throw new InvalidArgumentError(`call.${key}`, 'a function', given[key]);
  for (const key of hooks)
    if (given[key] !== undefined && typeof given[key] !== 'function')
      throw new InvalidArgumentError(`call.${key}`, 'a function, or left out', given[key]);
}
