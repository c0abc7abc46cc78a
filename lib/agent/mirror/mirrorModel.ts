import { InvalidArgumentError } from '../../machine/InvalidArgumentError';
import type { LLMCallBound } from '../AgentLoop';
import type { MirrorResponse } from './MirrorOutcomes';
import type { MirrorStop } from './MirrorStop';

/**
 * A framework's model call as `StepMirror.model` takes it: how to make it, what the mirror reads
 * of its answer, and how a journaled response is given back in the framework's own shape.
 */
export interface MirroredModelCall<R> {
  /** Makes the request (the framework's own call, retries and all). */
  send: () => Promise<R>;
  /** What the mirror reads of the answer: its text, tool calls, usage and model. */
  read: (answer: R) => MirrorResponse;
  /** A resumed run's journaled response, as the framework's answer (no request is made). */
  served: (recorded: MirrorResponse) => R | Promise<R>;
  /**
   * The request's bound (`{ inputTokens, maxOutputTokens, model? }`), or why it has none: asked
   * only when the mirror needs it (`needsBound`: a strict or external dollar cap, pricing, the
   * ledger). Left out, a strict cap refuses the call.
   */
  bound?: () => LLMCallBound | string | undefined;
  /** Stops the framework with the mirror's reason (a spent budget, a cancel); must throw. Default: throws it. */
  refuse?: (stop: MirrorStop) => never;
}

/** The steps of a model call that `mirrorModel` sequences (StepMirror's). */
export interface MirrorModelSteps {
  readonly needsBound: boolean;
  recordedResponse(): MirrorResponse | undefined;
  modelCallStart(bound?: LLMCallBound, whyNoBound?: string): Promise<MirrorStop | undefined>;
  modelCallFailed(error: unknown): void;
  modelResponse(response: MirrorResponse): MirrorStop | undefined;
}

const MODEL_CALL_KEYS: ReadonlySet<string> = new Set(['send', 'read', 'served', 'bound', 'refuse']);

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
  const bound = steps.needsBound ? call.bound?.() : undefined;
  const stop = await (typeof bound === 'string' ? steps.modelCallStart(undefined, bound) : steps.modelCallStart(bound));
  if (stop !== undefined) refuse(call, stop);
  let answer: R;
  try {
    answer = await call.send();
  } catch (error) {
    // Whether the framework tries again is its own: the next call through here is its retry.
    steps.modelCallFailed(error);
    throw error;
  }
  let response: MirrorResponse;
  try {
    response = call.read(answer);
  } catch (error) {
    // Answered but unreadable: its usage unknown, it is held at its worst case, as a failure is.
    steps.modelCallFailed(error);
    throw error;
  }
  const ended = steps.modelResponse(response);
  if (ended !== undefined) refuse(call, ended);
  return answer;
}

function refuse<R>(call: MirroredModelCall<R>, stop: MirrorStop): never {
  call.refuse?.(stop);
  throw stop;
}

function checkCall<R>(call: MirroredModelCall<R>): void {
  if (typeof call !== 'object' || call === null)
    throw new InvalidArgumentError('call', 'an object { send, read, served, bound?, refuse? }', call);
  for (const key of Object.keys(call))
    if (!MODEL_CALL_KEYS.has(key))
      throw new InvalidArgumentError(
        `call.${key}`,
        'left out: StepMirror.model takes send, read, served, bound and refuse',
        call,
      );
  for (const key of ['send', 'read', 'served'] as const)
    if (typeof call[key] !== 'function') throw new InvalidArgumentError(`call.${key}`, 'a function', call[key]);
  for (const key of ['bound', 'refuse'] as const)
    if (call[key] !== undefined && typeof call[key] !== 'function')
      throw new InvalidArgumentError(`call.${key}`, 'a function, or left out', call[key]);
}
