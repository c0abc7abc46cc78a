import type { Pool, PoolClient } from 'pg';
import { HistoryFileError } from 'agent-state-machine/history';
import { PostgresUnreachableError } from './PostgresUnreachableError';
import { isSqlError } from './isSqlError';
import { ConnectionLease } from './ConnectionLease';
import { asError } from '../../internal/asError';
import { ignore } from '../../internal/ignore';

/**
 * A store's pool of connections, and how work on it fails: a server that cannot be reached is a
 * `PostgresUnreachableError` naming `host:port` and how long it waited, an SQL error is itself.
 */
export class PostgresPool {
  readonly #pool: Pool;
  readonly #address: string;
  readonly #connectTimeoutMs: number;

  constructor(pool: Pool, address: string, connectTimeoutMs: number) {
    this.#pool = pool;
    this.#address = address;
    this.#connectTimeoutMs = connectTimeoutMs;
    // An idle connection the server drops must not crash the process; the next query reports it.
    pool.on('error', ignore);
  }

  /** A lease for one run's commits: it keeps the connection `run` checked out, with the same error listener. */
  lease(): ConnectionLease {
    return new ConnectionLease(ignore);
  }

  /** Closes every connection. */
  end(): Promise<void> {
    return this.#pool.end();
  }

  /**
   * `work` on a pooled connection (`lease`'s, when it keeps one, and kept there after), its
   * failure to reach the server said as `PostgresUnreachableError`.
   */
  run<T>(operation: string, work: (client: PoolClient) => Promise<T>, lease?: ConnectionLease): Promise<T> {
    return this.bounded(operation, async () => {
      let client = lease?.take();
      if (client === undefined) {
        client = await this.#pool.connect();
        // A connection that dies while checked out is an error event beside the query's failure:
        // the query's is the one told, and the event must not crash the process.
        client.on('error', ignore);
      }
      let broken: unknown;
      try {
        return await work(client);
      } catch (error) {
        if (!isSqlError(error) && !(error instanceof HistoryFileError)) broken = error;
        throw error;
      } finally {
        if (lease !== undefined && broken === undefined) lease.keep(client);
        else {
          client.removeListener('error', ignore);
          // A connection that failed on the wire is not given to the next query.
          client.release(broken === undefined ? undefined : asError(broken));
        }
      }
    });
  }

  /**
   * `run` for a statement whose second sending changes nothing (a line goes in at its number
   * once): a connection lost on the way, as when the server restarts, is tried again on a new
   * one until the server answers or `connectTimeoutMs` has passed since the first failure, so a
   * run goes on once its server is back, and ends naming how long it waited when it is not.
   */
  async runAgain<T>(operation: string, work: (client: PoolClient) => Promise<T>, lease?: ConnectionLease): Promise<T> {
    const started = Date.now();
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.run(operation, work, lease);
      } catch (error) {
        if (!(error instanceof PostgresUnreachableError)) throw error;
        const waited = Date.now() - started;
        if (waited >= this.#connectTimeoutMs)
          throw new PostgresUnreachableError(this.#address, operation, waited, error.cause);
        // A restarting server refuses connections for a moment: not a busy loop meanwhile.
        await new Promise((resolve) => setTimeout(resolve, Math.min(100, 10 * attempt)));
      }
    }
  }

  async bounded<T>(operation: string, work: () => Promise<T>): Promise<T> {
    const started = Date.now();
    try {
      return await work();
    } catch (error) {
      if (isSqlError(error) || error instanceof HistoryFileError) throw error;
      throw new PostgresUnreachableError(this.#address, operation, Date.now() - started, error);
    }
  }
}
