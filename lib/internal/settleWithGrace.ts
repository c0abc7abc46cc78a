import type { Sleep } from './sleep';

/** How an operation ended: with a value, with a throw, or abandoned after cancellation. */
export type Settled<T> = { kind: 'value'; value: T } | { kind: 'threw'; error: unknown } | { kind: 'abandoned' };

/**
 * Awaits `op()` and never rejects. Once `signal` aborts, the operation gets `graceMs` to
 * settle — by finishing, or by aborting through the signal — and is then abandoned, so an
 * operation that ignores its signal cannot hang its caller. Used by a batch's agent factories
 * and a turn's `settleToolCalls`; a turn's own operations go through a `GraceGroup`, which
 * needs no listener on the signal.
 */
export async function settleWithGrace<T>(
  op: () => Promise<T> | T,
  signal: AbortSignal,
  graceMs: number,
  sleep: Sleep,
): Promise<Settled<T>> {
  let settled: Promise<Settled<T>>;
  try {
    settled = Promise.resolve(op()).then(
      (value): Settled<T> => ({ kind: 'value', value }),
      (error: unknown): Settled<T> => ({ kind: 'threw', error }),
    );
  } catch (error) {
    return { kind: 'threw', error };
  }
  // The grace timer and its controller exist only once cancellation happens: building an
  // AbortController per call (and aborting it) cost ~11 µs per operation on Node 20.
  let stopGrace: AbortController | undefined;
  let onAbort: (() => void) | undefined;
  const abandoned = new Promise<Settled<T>>((resolve) => {
    onAbort = (): void => {
      stopGrace = new AbortController();
      // After the grace, wait one more macrotask so that an operation which has already
      // finished (its promise settling in microtasks) wins over abandonment.
      void sleep(graceMs, stopGrace.signal).then(() => setTimeout(() => resolve({ kind: 'abandoned' }), 0));
    };
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
  });
  const result = await Promise.race([settled, abandoned]);
  signal.removeEventListener('abort', onAbort!);
  stopGrace?.abort('settled');
  return result;
}
