import { Client, type ClientConfig } from 'pg';
import { HistoryFileError } from 'agent-state-machine/history';
import { PostgresUnreachableError } from './PostgresUnreachableError';
import { isSqlError } from './isSqlError';
import { ignore } from '../../internal/ignore';

/** Which batch a lock is for, and whether its writers share it (a distributed batch's). */
export interface BatchLockKeys {
  schema: string;
  batchId: string;
  shared: boolean;
}

/** How a lock reaches its server. */
export interface BatchLockServer {
  config: ClientConfig;
  /** `host:port`, as errors name it. */
  address: string;
  connectTimeoutMs: number;
}

/**
 * A batch's lock: a session's advisory lock on a connection of its own, freed when the batch
 * closes or its process dies. A connection that ends under it (a server restart, a dropped
 * socket) frees it as well, so it is taken again at once, and every write of the batch waits
 * for it (`held`). When another process took the batch meanwhile, each later write is refused,
 * naming why: two processes never write one batch. (A write sent before this process hears that
 * the connection ended may still land: checking the lock inside every write would cost each
 * line a round trip to `pg_locks`.)
 */
export class BatchLock {
  readonly #server: BatchLockServer;
  readonly #keys: BatchLockKeys;
  /** The connection that holds the lock; undefined while it is being taken again. */
  #client: Client | undefined;
  #closed = false;
  /** Taking the lock again after its connection ended. */
  #retaking: Promise<void> | undefined;
  /** Another process took the batch while this one had lost its lock: final. */
  #refused: HistoryFileError | undefined;

  private constructor(server: BatchLockServer, keys: BatchLockKeys) {
    this.#server = server;
    this.#keys = keys;
  }

  /** The lock, taken; undefined when another process holds it. Rejects when the server does not answer. */
  static async take(server: BatchLockServer, keys: BatchLockKeys): Promise<BatchLock | undefined> {
    const lock = new BatchLock(server, keys);
    return (await lock.#tryTake()) ? lock : undefined;
  }

  /**
   * Resolves while the batch holds its lock, after taking it again when its connection ended.
   * Rejects with a `HistoryFileError` when another process took the batch meanwhile, and with a
   * `PostgresUnreachableError` when the server did not answer within `connectTimeoutMs`.
   */
  async held(): Promise<void> {
    if (this.#refused !== undefined) throw this.#refused;
    if (this.#client !== undefined || this.#closed) return;
    await (this.#retaking ??= this.#takeAgain().finally(() => (this.#retaking = undefined)));
  }

  /** Frees the lock. */
  async close(): Promise<void> {
    this.#closed = true;
    const client = this.#client;
    this.#client = undefined;
    await this.#retaking?.catch(ignore);
    await client?.end();
  }

  /** Connects and tries the lock: true, holding it on that connection; false, another process holds it. */
  async #tryTake(): Promise<boolean> {
    const client = new Client(this.#server.config);
    // Its failures are told by `held`: an event on a dead connection must not crash the process.
    client.on('error', ignore);
    try {
      await client.connect();
      const { schema, batchId, shared } = this.#keys;
      const { rows } = await client.query<{ locked: boolean }>(
        // Shared: the writers of one distributed batch hold it together, and keep a runBatch out.
        `SELECT pg_try_advisory_lock${shared ? '_shared' : ''}(hashtext($1), hashtext($2)) AS locked`,
        [schema, batchId],
      );
      if (rows[0]?.locked !== true || this.#closed) {
        await client.end().catch(ignore);
        return false;
      }
    } catch (error) {
      await client.end().catch(ignore);
      throw error;
    }
    this.#client = client;
    const lost = (): void => {
      if (this.#client !== client) return;
      this.#client = undefined;
      client.end().catch(ignore);
      // Taken again at once, not at the next write: the batch is without it meanwhile.
      if (!this.#closed) this.held().catch(ignore);
    };
    client.on('error', lost);
    client.on('end', lost);
    return true;
  }

  /** The lock taken again, trying until the server answers or `connectTimeoutMs` has passed. */
  async #takeAgain(): Promise<void> {
    const { batchId } = this.#keys;
    const started = Date.now();
    for (let attempt = 1; ; attempt++) {
      try {
        if (await this.#tryTake()) return;
        if (this.#closed) return;
        throw (this.#refused = new HistoryFileError(
          'write_failed',
          `batch ${batchId}`,
          "this process lost the batch's lock when its connection to PostgreSQL ended, and another process took the batch meanwhile: it writes no more of it, as two processes never write one batch; resume the batch (resume: true) from one process",
        ));
      } catch (error) {
        if (error === this.#refused || isSqlError(error)) throw error;
        const waited = Date.now() - started;
        if (waited >= this.#server.connectTimeoutMs)
          throw new PostgresUnreachableError(
            this.#server.address,
            `taking the lock of batch ${batchId} again`,
            waited,
            error,
          );
        // A restarting server refuses connections for a moment: not a busy loop meanwhile.
        await new Promise((resolve) => setTimeout(resolve, Math.min(100, 10 * attempt)));
      }
    }
  }
}
