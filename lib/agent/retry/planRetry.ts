import { retryAfterMs, type ResolvedRetry } from './retryAfter';
import { retryDelay } from './retryDelay';
import { OperationError } from '../TurnError';

/** What to do after a failed LLM attempt. */
export type RetryPlan =
  /** Out of retries, or the error is not worth retrying. */
  | { kind: 'stop' }
  /** Retry after `ms`; `retryAfterMs` when the server asked for a wait. */
  | { kind: 'wait'; ms: number; retryAfterMs?: number }
  /** Worth retrying, but the server asked to wait longer than `maxDelayMs`: `why` says so. */
  | { kind: 'refused'; why: string; retryAfterMs: number }
  /** A hook of `retry` (shouldRetry, delayMs) threw or answered nonsense. */
  | { kind: 'error'; error: OperationError };

/**
 * Pure but for `random` and `clock` (read only for a Retry-After date): whether and when attempt `attempt` (1 for the first), which
 * failed with `error`, is retried under `retry` — its count, `shouldRetry`, a `delayMs`
 * override, exponential backoff with jitter, and the server's Retry-After.
 */
export function planRetry(
  error: unknown,
  attempt: number,
  retry: ResolvedRetry,
  random: () => number,
  clock: () => number,
): RetryPlan {
  if (attempt > retry.retries) return STOP;
  let worth: unknown;
  try {
    worth = retry.shouldRetry(error);
  } catch (thrown) {
    return { kind: 'error', error: new OperationError('retry.shouldRetry', thrown) };
  }
  if (worth !== true) return STOP;
  if (retry.delayMs !== undefined) {
    let ms: unknown;
    try {
      ms = retry.delayMs(error, attempt);
    } catch (thrown) {
      return { kind: 'error', error: new OperationError('retry.delayMs', thrown) };
    }
    if (ms !== undefined) {
      if (!(typeof ms === 'number' && Number.isFinite(ms) && ms >= 0)) {
        return {
          kind: 'error',
          error: new OperationError(
            'retry.delayMs',
            new Error(`returned ${String(ms)}, expected a non-negative number of ms or undefined`),
          ),
        };
      }
      return { kind: 'wait', ms };
    }
  }
  const backoff = retryDelay(attempt, retry.baseDelayMs, retry.maxDelayMs, random);
  const asked = retryAfterMs(error, clock());
  if (asked === undefined) return { kind: 'wait', ms: backoff };
  if (asked > retry.maxDelayMs) {
    return {
      kind: 'refused',
      why: `the server asked to wait ${asked} ms (Retry-After), longer than retry.maxDelayMs ${retry.maxDelayMs}`,
      retryAfterMs: asked,
    };
  }
  return { kind: 'wait', ms: Math.max(backoff, Math.ceil(asked)), retryAfterMs: asked };
}

const STOP: RetryPlan = Object.freeze({ kind: 'stop' });
