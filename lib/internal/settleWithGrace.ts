import type { Sleep } from './sleep';

/** How an operation ended: with a value, with a throw, or abandoned after cancellation. */
export type Settled<T> = { kind: 'value'; value: T } | { kind: 'threw'; error: unknown } | { kind: 'abandoned' };

/**
 * Awaits `op()` and never rejects. Once `signal` aborts, the operation gets `graceMs` to
 * settle — by finishing, or by aborting through the signal — and is then abandoned, so an
 * operation that ignores its signal cannot hang its caller. Shared by a turn's agent calls
 * and a batch's agent factories.
 *
 * `aborted`, when given, is a promise that resolves when `signal` aborts, shared by many
 * calls (a turn makes one): each call then reacts to it instead of adding and removing a
 * listener of its own on the signal, which costs about a microsecond per call on Node 20.
 */
export async function settleWithGrace<T>(op: () => Promise<T> | T, signal: AbortSignal, graceMs: number, sleep: Sleep, aborted?: Promise<unknown>): Promise<Settled<T>> {
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
  let done = false;
  const abandoned = new Promise<Settled<T>>((resolve) => {
    onAbort = (): void => {
      // A shared `aborted` promise calls back calls that are long over: nothing to abandon.
      if (done) return;
      stopGrace = new AbortController();
      // After the grace, wait one more macrotask so that an operation which has already
      // finished (its promise settling in microtasks) wins over abandonment.
      void sleep(graceMs, stopGrace.signal).then(() => setTimeout(() => resolve({ kind: 'abandoned' }), 0));
    };
    if (signal.aborted) onAbort();
    else if (aborted !== undefined) void aborted.then(onAbort);
    else signal.addEventListener('abort', onAbort, { once: true });
  });
  const result = await Promise.race([settled, abandoned]);
  done = true;
  if (aborted === undefined) signal.removeEventListener('abort', onAbort!);
  stopGrace?.abort('settled');
  return result;
}
