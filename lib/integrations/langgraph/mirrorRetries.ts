import {
  BudgetExceededError,
  OperationError,
  StreamCutError,
  TurnCancelledError,
  type LLMCallBound,
  type StepMirror,
} from 'agent-state-machine';
import type { ClientRetries } from '../../internal/clientRetries';
import type { CallerRetries } from './callerRetries';

/**
 * The caller retries of model run `runId`, made by `mirror` (its model sends with `maxRetries: 0`):
 * each failed request is charged by its status (a 429 released, a 5xx uncertain at its hold),
 * and each retry waits as the client would and is gated (`gate`, which throws the mirror's stop)
 * with the call's bound (`bounds`, by model run) as an attempt. The mirror's own stops (a
 * refused call, a cut stream) are never retried.
 */
export function mirrorRetries(
  mirror: StepMirror,
  gate: (bound: LLMCallBound | string | undefined) => Promise<void>,
  bounds: ReadonlyMap<string, LLMCallBound | string | undefined>,
  runId: string | undefined,
  retries: CallerRetries,
  signal: AbortSignal | undefined,
): ClientRetries {
  return {
    retries: retries.retries,
    wouldRetry: (error) => !isMirrorStop(error) && retries.wouldRetry(error),
    failed: (error, delayMs) => mirror.modelCallFailed(error, { willRetry: true, delayMs }),
    gate: () =>
      gate(
        runId !== undefined && bounds.has(runId)
          ? bounds.get(runId)
          : mirror.needsBound
            ? 'a retried chat model call LangChain gives no run, so its request (and its bound) cannot be told apart from the calls beside it'
            : undefined,
      ),
    ...(signal === undefined ? {} : { signal }),
  };
}

/** The mirror's own stops: a refused call, a cancelled or ended run, a stream cut at its bound. */
function isMirrorStop(error: unknown): boolean {
  return (
    error instanceof BudgetExceededError ||
    error instanceof TurnCancelledError ||
    error instanceof OperationError ||
    error instanceof StreamCutError
  );
}
