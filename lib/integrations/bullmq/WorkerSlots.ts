/**
 * A worker's slots when its runs can park (a batch paused at its cap): the runs in a slot never
 * number more than `size`, whether BullMQ handed their job out now or they went on after a
 * raise, and a parked run that goes on gets the next free slot before any new run starts. A
 * parked run holds none.
 */
export class WorkerSlots {
  readonly #size: number;
  #taken = 0;
  /** Parked runs that were raised and wait for a slot: first served. */
  readonly #resuming: Array<() => void> = [];
  /** New runs (jobs BullMQ handed out) waiting for a slot. */
  readonly #starting: Array<() => void> = [];

  constructor(size: number) {
    this.#size = size;
  }

  /** Runs in a slot now. */
  get taken(): number {
    return this.#taken;
  }

  /** A new run's slot: resolves once one is free and no raised run waits for one. */
  take(): Promise<void> {
    if (this.#taken < this.#size && this.#resuming.length === 0) {
      this.#taken += 1;
      return Promise.resolve();
    }
    return new Promise<void>((resolve) => this.#starting.push(resolve));
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
    const next = this.#resuming.shift() ?? this.#starting.shift();
    if (next === undefined) this.#taken = Math.max(0, this.#taken - 1);
    else next();
  }
}
