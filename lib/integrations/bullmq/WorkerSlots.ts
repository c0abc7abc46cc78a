/**
 * A worker's slots when its runs can park (a batch paused at its cap): the runs in a slot never
 * number more than `size`, whether BullMQ handed their job out now or they went on after a
 * raise, and a parked run that goes on gets the next free slot before any new run starts. A
 * parked run holds none.
 */
export class WorkerSlots {
  readonly #size: number;
  #taken = 0;
  #closed = false;
  /** Parked runs that were raised and wait for a slot: first served. */
  readonly #resuming: Array<() => void> = [];
  /** New runs (jobs BullMQ handed out) waiting for a slot, told whether they got one. */
  readonly #starting: Array<(taken: boolean) => void> = [];

  constructor(size: number) {
    this.#size = size;
  }

  /** Runs in a slot now. */
  get taken(): number {
    return this.#taken;
  }

  /**
   * A new run's slot: resolves with true once one is free and no raised run waits for one, or
   * with false once the worker closes (the run is not to start).
   */
  take(): Promise<boolean> {
    if (this.#closed) return Promise.resolve(false);
    if (this.#taken < this.#size && this.#resuming.length === 0) {
      this.#taken += 1;
      return Promise.resolve(true);
    }
    return new Promise<boolean>((resolve) => this.#starting.push(resolve));
  }

  /** The worker closes: no new run starts, those waiting for a slot included. Raised runs still get theirs. */
  close(): void {
    this.#closed = true;
    for (const refuse of this.#starting.splice(0)) refuse(false);
  }

  /** A raised run's slot, before any new run's. */
  takeFirst(): Promise<void> {
    if (this.#taken < this.#size) {
      this.#taken += 1;
      return Promise.resolve();
    }
    return new Promise<void>((resolve) => this.#resuming.push(resolve));
  }

  /** Lets go of a slot: it goes to the first raised run waiting, else to the first new one. */
  free(): void {
    const resuming = this.#resuming.shift();
    if (resuming !== undefined) return resuming();
    const starting = this.#starting.shift();
    if (starting === undefined) this.#taken = Math.max(0, this.#taken - 1);
    else starting(true);
  }
}
