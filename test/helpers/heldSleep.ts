import type { Sleep } from '../../lib/internal/sleep';

/**
 * A `sleep` option that holds every wait of `ms` until the test calls `release()`, and ends
 * any other wait at once (each also ends when its signal aborts): a timeout passes when the
 * test says, never by the clock.
 */
export function heldSleep(ms: number): { sleep: Sleep; release: () => void } {
  let held: (() => void) | undefined;
  const sleep: Sleep = (wait, signal) =>
    new Promise<void>((resolve) => {
      if (wait === ms) held = resolve;
      else resolve();
      signal?.addEventListener('abort', () => resolve(), { once: true });
    });
  return {
    sleep,
    release: () => {
      if (held === undefined) throw new Error(`release(): nothing is waiting ${ms} ms yet`);
      held();
    },
  };
}
