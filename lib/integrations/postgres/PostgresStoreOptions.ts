/** Options of `new PostgresStore(url, options)`. */
export interface PostgresStoreOptions {
  /**
   * The schema its tables live in (created if missing). Default: the connection's current
   * schema (the first of its search_path that exists, which a URL can set with
   * `?options=-c%20search_path%3Dname`), else `public`.
   */
  schema?: string;
  /**
   * How long connecting may take, milliseconds (also the wait for a free connection, and for a
   * restarted server to come back when a run's line lost its connection). Default 5000.
   */
  connectTimeoutMs?: number;
  /** How long one statement may take, milliseconds, on the server and on the wire. Default 10000. */
  statementTimeoutMs?: number;
  /** The most connections it opens at once (a batch's lock takes one more). Default 10. */
  maxConnections?: number;
}
