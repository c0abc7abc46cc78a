/**
 * Waits `ms` milliseconds, or less if `signal` aborts first; never rejects. The adapter waits
 * through this (backoff, cancellation grace), and tests pass their own to skip real waiting.
 */
export type Sleep = (ms: number, signal?: AbortSignal) => Promise<void>;

/** The longest delay `setTimeout` honours; a longer one fires after 1 ms. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

export const sleep: Sleep = (ms, signal) =>
  new Promise<void>((resolve) => {
    if (signal?.aborted) return resolve();
    let timer: ReturnType<typeof setTimeout>;
    const done = (): void => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    // Longer waits are chained in steps setTimeout honours (Infinity waits until the abort).
    let left = ms;
    const step = (): void => {
      if (!(left > 0)) return done();
      const now = Math.min(left, MAX_TIMER_MS);
      left -= now;
      timer = setTimeout(step, now);
    };
    signal?.addEventListener('abort', done, { once: true });
    if (!(ms > 0)) timer = setTimeout(done, 0);
    else step();
  });
