import type { Settled } from './settleWithGrace';
import type { Sleep } from './sleep';

/**
 * Operations awaited under one AbortSignal that only their owner aborts (a turn's), each as
 * `settleWithGrace` awaits it: the settled promise never rejects, and once the signal aborts,
 * a running operation gets `graceMs` to settle — by finishing, or by aborting through the
 * signal — and is then abandoned.
 *
 * The owner calls `aborted()` right after aborting the signal, instead of each operation
 * listening to it and racing its result against abandonment: an operation then costs one
 * promise and its two reactions (~130 ns on Node 20, against ~400 ns for the race).
 */
export class GraceGroup {
  readonly #signal: AbortSignal;
  readonly #graceMs: number;
  readonly #sleep: Sleep;
  /** The operations awaited now and not yet in their grace: usually one. */
  readonly #running: Running<never>[] = [];

  constructor(signal: AbortSignal, graceMs: number, sleep: Sleep) {
    this.#signal = signal;
    this.#graceMs = graceMs;
    this.#sleep = sleep;
  }

  /** Settles an operation already started: `started` is what it returned (a promise, a thenable or a value). */
  settle<T>(started: PromiseLike<T> | T): Promise<Settled<T>> {
    return new Promise<Settled<T>>((resolve) => {
      const running = new Running<T>(resolve, this.#running as Running<unknown>[] as Running<T>[]);
      Promise.resolve(started).then(
        (value) => running.end({ kind: 'value', value }),
        (error: unknown) => running.end({ kind: 'threw', error }),
      );
      if (this.#signal.aborted) running.startGrace(this.#graceMs, this.#sleep);
      else running.list.push(running);
    });
  }

  /** Starts the grace of every running operation. Call it right after aborting the signal. */
  aborted(): void {
    for (const running of this.#running.splice(0)) running.startGrace(this.#graceMs, this.#sleep);
  }
}

/** One awaited operation: resolved once, by its outcome or, after its grace, as abandoned. */
class Running<T> {
  #done = false;
  /** Exists only once the grace started: stops its timer when the operation settles. */
  #grace: AbortController | undefined;

  constructor(
    readonly resolve: (settled: Settled<T>) => void,
    /** The group's list of operations not yet in their grace, which this one leaves when it ends. */
    readonly list: Running<T>[],
  ) {}

  end(settled: Settled<T>): void {
    if (this.#done) return;
    this.#done = true;
    const list = this.list;
    if (list[list.length - 1] === this) list.pop();
    else {
      const i = list.indexOf(this);
      if (i !== -1) list.splice(i, 1);
    }
    this.#grace?.abort('settled');
    this.resolve(settled);
  }

  startGrace(graceMs: number, sleep: Sleep): void {
    if (this.#done) return;
    this.#grace = new AbortController();
    // After the grace, wait one more macrotask so that an operation which has already
    // finished (its promise settling in microtasks) wins over abandonment.
    void sleep(graceMs, this.#grace.signal).then(() => setTimeout(() => this.end({ kind: 'abandoned' }), 0));
  }
}
