import type { PoolClient } from 'pg';

/**
 * A pooled connection a run keeps between its commits while they come back to back, given
 * back to the pool once the event loop turns with none waiting. The next commit's statement
 * then goes out the moment the last one is answered: a checkout waits for the next tick, that
 * is, after whatever the run's agent does meanwhile, which would put the agent's work between
 * every two commits.
 */
export class ConnectionLease {
  #client: PoolClient | undefined;
  #returning = false;
  readonly #whileHeld: () => void;

  /** `whileHeld` listens to the connection's `error` events while it is kept (a dead idle one must not crash the process). */
  constructor(whileHeld: () => void) {
    this.#whileHeld = whileHeld;
  }

  /** The connection kept, taken (undefined when none is). */
  take(): PoolClient | undefined {
    const client = this.#client;
    this.#client = undefined;
    return client;
  }

  /** Keeps `client` (a healthy one) for the next commit; the pool gets it back on the next turn of the event loop unless taken. */
  keep(client: PoolClient): void {
    this.#client = client;
    if (this.#returning) return;
    this.#returning = true;
    setImmediate(() => {
      this.#returning = false;
      const kept = this.take();
      if (kept === undefined) return;
      kept.removeListener('error', this.#whileHeld);
      kept.release();
    });
  }
}
