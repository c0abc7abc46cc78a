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
  /** The server pids of the sessions that held the lock for this batch: one may outlive its socket here. */
  readonly #ownPids = new Set<number>();

  private constructor(server: BatchLockServer, keys: BatchLockKeys) {
    this.#server = server;
    this.#keys = keys;
  }

  /** The lock, taken; undefined when another process holds it. Rejects when the server does not answer. */
  static async take(server: BatchLockServer, keys: BatchLockKeys): Promise<BatchLock | undefined> {
    const lock = new BatchLock(server, keys);
    // A first take has no earlier session: `'own'` there means the holder let go between the
    // try and the look, and it is refused as a held lock is (the caller says who holds it).
    return (await lock.#tryTake()) === true ? lock : undefined;
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

  /**
   * Connects and tries the lock: true, holding it on that connection; false, it is held
   * elsewhere; `'own'`, only by a session of this lock that this process saw end but the server
   * still runs (a socket dropped here, a session terminated but not yet gone): it is ended.
   */
  async #tryTake(): Promise<boolean | 'own'> {
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
        const own = rows[0]?.locked !== true && !this.#closed && (await this.#endOwnHolders(client));
        await client.end().catch(ignore);
        return own ? 'own' : false;
      }
    } catch (error) {
      await client.end().catch(ignore);
      throw error;
    }
    this.#client = client;
    // Held here now: an older session of this lock that still ran would have held it.
    this.#ownPids.clear();
    const pid = (client as unknown as { processID?: unknown }).processID;
    if (typeof pid === 'number') this.#ownPids.add(pid);
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

  /**
   * Whether every session holding the lock is one this lock held it on before: those are ended
   * (`pg_terminate_backend`), so that the next try takes it. A session of another process is
   * left alone.
   */
  async #endOwnHolders(client: Client): Promise<boolean> {
    const { schema, batchId } = this.#keys;
    const { rows } = await client.query<{ pid: number }>(
      `SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted AND objsubid = 2
       AND classid = hashtext($1)::oid AND objid = hashtext($2)::oid`,
      [schema, batchId],
    );
    if (rows.length === 0) return true;
    if (!rows.every((r) => this.#ownPids.has(r.pid))) return false;
    for (const { pid } of rows) await client.query('SELECT pg_terminate_backend($1)', [pid]);
    return true;
  }

  /** The lock taken again, trying until the server answers or `connectTimeoutMs` has passed. */
  async #takeAgain(): Promise<void> {
    const { batchId } = this.#keys;
    const started = Date.now();
    for (let attempt = 1; ; attempt++) {
      let why: unknown;
      try {
        const taken = await this.#tryTake();
        if (taken === true || this.#closed) return;
        if (taken === false)
          throw (this.#refused = new HistoryFileError(
            'write_failed',
            `batch ${batchId}`,
            "this process lost the batch's lock when its connection to PostgreSQL ended, and another process took the batch meanwhile: it writes no more of it, as two processes never write one batch; resume the batch (resume: true) from one process",
          ));
        // Its own earlier session still held it, and was ended: tried again once it is gone.
        why = new Error("the batch's earlier session still held its lock");
      } catch (error) {
        if (error === this.#refused || isSqlError(error)) throw error;
        // Closing: the batch writes no more, so the lock is not waited for.
        if (this.#closed) return;
        why = error;
      }
      const waited = Date.now() - started;
      if (waited >= this.#server.connectTimeoutMs)
        throw new PostgresUnreachableError(
          this.#server.address,
          `taking the lock of batch ${batchId} again`,
          waited,
          why,
        );
      // A restarting server refuses connections for a moment: not a busy loop meanwhile.
      await new Promise((resolve) => setTimeout(resolve, Math.min(100, 10 * attempt)));
    }
  }
}
