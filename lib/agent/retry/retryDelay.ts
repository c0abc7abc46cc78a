/** How the adapter retries a failed LLM call: attempts, backoff, and which errors to retry. */
export interface RetryOptions {
  /** Retries after the first attempt. Default 2. */
  retries?: number;
  /** Delay before the first retry; doubles each time. Default 500 ms. */
  baseDelayMs?: number;
  /** Cap on one delay. A server asking (Retry-After) for longer than this means no retry. Default 30 s. */
  maxDelayMs?: number;
  /**
   * Whether a failure is worth retrying. Default `defaultShouldRetry`: by HTTP status (408,
   * 409, 425, 429, ≥ 500), every failure without a status, never an abort.
   */
  shouldRetry?: (error: unknown) => boolean;
  /**
   * The delay before retry `attempt` (1 for the first retry) in ms, overriding the backoff and
   * Retry-After; return `undefined` to keep the default.
   */
  delayMs?: (error: unknown, attempt: number) => number | undefined;
}

/**
 * Exponential backoff with "equal jitter": half the exponential delay is kept, the other
 * half is random, so retries from many runs spread out but never come back at once.
 * Pure: `random` returns [0, 1).
 */
export function retryDelay(attempt: number, baseDelayMs: number, maxDelayMs: number, random: () => number): number {
  const exponential = Math.min(maxDelayMs, baseDelayMs * 2 ** (attempt - 1));
  return Math.round(exponential / 2 + random() * (exponential / 2));
}
