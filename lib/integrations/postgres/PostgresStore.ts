import { Pool } from 'pg';
import {
  HistoryFileError,
  RunLinesSink,
  readRunFile,
  type JsonlHistorySinkOptions,
  type RunFileFacts,
} from 'agent-state-machine/history';
import { InvalidArgumentError, type TransitionTable } from 'agent-state-machine';
import { attemptSpends, batchHeldMessage, spendOfRun } from 'agent-state-machine/internal';
import {
  type RunSink,
  type RunStore,
  type BatchManifest,
  type StoreBatch,
  type StoreBatchOptions,
  type StoredBatch,
  type StoredRun,
  type StoredRunQuery,
  type ApprovalAnswer,
  type KeptAnswer,
  type CapPause,
  type RaiseRequest,
} from 'agent-state-machine/batch';
import type { PostgresStoreOptions } from './PostgresStoreOptions';

export type { PostgresStoreOptions } from './PostgresStoreOptions';
import { schemaStatements, schemaTables, type SchemaTables } from './postgresSchema';
import { storedBatchOf, storedBatchQueries, type AttemptRow } from './storedBatch';
import { runLineWriter } from './runLineWriter';
import { listedRuns } from './listedRuns';
import { answerRows } from './answerRows';
import { raiseRows } from './raiseRows';
import { batchRows } from './batchRows';
import { type ConnectionLease } from './ConnectionLease';
import { PostgresPool } from './PostgresPool';
import { PostgresUnreachableError } from './PostgresUnreachableError';
import { BatchLock } from './BatchLock';
import { ignore } from '../../internal/ignore';

/** Throws `error` when the server did not answer (its cause, or its cause's, is `PostgresUnreachableError`). */
function rethrowUnreachable(error: unknown): void {
  for (let e: unknown = error; e instanceof Error; e = e.cause) if (e instanceof PostgresUnreachableError) throw error;
}

/** Lines read from the database at once. */
const PAGE_LINES = 1000;

/**
 * A `RunStore` on PostgreSQL: `runBatch({ store: new PostgresStore(url) })` keeps each run's
 * history as rows that hold its lines' JSON (so `loadHistory`, the summaries and the CLI read
 * them as they read files), one row a run with its outcome, cost, calls and duration for
 * questions across runs (`agent-sm runs --store URL`), and one row a batch with its manifest.
 * Its tables are created on first use, or by `agent-sm store migrate URL`.
 *
 * Fail closed: every statement is bounded (`statementTimeoutMs`, `connectTimeoutMs`); a server
 * that does not answer fails the operation with `PostgresUnreachableError`, naming `host:port`
 * and how long it waited, and a run whose `reserve` line is not committed makes no call.
 */
export class PostgresStore implements RunStore {
  /** `postgres://host:port/database`, without user or password. */
  readonly name: string;
  /** `host:port`, as errors name it. */
  readonly address: string;
  #schema: string | undefined;
  readonly #url: string;
  readonly #db: PostgresPool;
  readonly #connectTimeoutMs: number;
  readonly #statementTimeoutMs: number;
  #migrated: Promise<void> | undefined;
  /** The locks of the batches open on this store: a write for one of them waits for them, as its runs' writes do. */
  readonly #open = new Map<string, Set<BatchLock>>();

  constructor(url: string, options: PostgresStoreOptions = {}) {
    if (typeof url !== 'string' || !/^postgres(ql)?:\/\//.test(url))
      throw new InvalidArgumentError('url', 'a PostgreSQL URL, postgres://user@host:port/database', url);
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      throw new InvalidArgumentError('url', 'a PostgreSQL URL, postgres://user@host:port/database', url);
    }
    const { schema, connectTimeoutMs = 5000, statementTimeoutMs = 10_000, maxConnections = 10 } = options;
    if (schema !== undefined && (typeof schema !== 'string' || schema === ''))
      throw new InvalidArgumentError('schema', 'a schema name', schema);
    for (const [key, value] of Object.entries({ connectTimeoutMs, statementTimeoutMs, maxConnections }))
      if (!(Number.isSafeInteger(value) && value > 0))
        throw new InvalidArgumentError(key, 'a positive whole number', value);
    this.address = `${parsed.hostname || 'localhost'}:${parsed.port || '5432'}`;
    this.name = `postgres://${this.address}${parsed.pathname === '/' ? '' : parsed.pathname}`;
    this.#schema = schema;
    this.#url = url;
    this.#connectTimeoutMs = connectTimeoutMs;
    this.#statementTimeoutMs = statementTimeoutMs;
    this.#db = new PostgresPool(
      new Pool({ ...this.#connection(), max: maxConnections }),
      this.address,
      connectTimeoutMs,
    );
  }

  /** The schema its tables live in (the connection's current one is known once `migrate` has run). */
  get schema(): string {
    return this.#schema ?? 'public';
  }

  /** Creates the schema and tables when missing; idempotent, and safe from many processes at once. */
  migrate(): Promise<void> {
    return (this.#migrated ??= this.#db
      .run('creating its tables', async (client) => {
        await client.query('BEGIN');
        try {
          // Two processes creating the same table at once would collide: one at a time.
          if (this.#schema === undefined) {
            const { rows } = await client.query<{ schema: string | null }>('SELECT current_schema() AS schema');
            this.#schema = rows[0]?.schema ?? 'public';
          }
          await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`agent_sm_migrate:${this.#schema}`]);
          for (const statement of schemaStatements(this.#schema)) await client.query(statement);
          await client.query('COMMIT');
        } catch (error) {
          await client.query('ROLLBACK').catch(() => undefined);
          throw error;
        }
      })
      .catch((error: unknown) => {
        this.#migrated = undefined;
        throw error;
      }));
  }

  async openBatch(options: StoreBatchOptions): Promise<StoreBatch> {
    const { batchId, owner, resume = false, shared = false } = options;
    if (typeof batchId !== 'string' || batchId === '')
      throw new InvalidArgumentError('batchId', 'a non-empty string', batchId);
    await this.migrate();
    const t = this.#tables();
    const lock = await this.#db.bounded(`locking batch ${batchId}`, () =>
      BatchLock.take(
        { config: this.#connection(), address: this.address, connectTimeoutMs: this.#connectTimeoutMs },
        { schema: this.schema, batchId, shared },
      ),
    );
    if (lock === undefined) {
      const held = await this.#db.run(`finding who writes batch ${batchId}`, (c) =>
        c.query<{ owner: string | null }>(`SELECT owner FROM ${t.batches} WHERE batch_id = $1`, [batchId]),
      );
      throw new HistoryFileError(
        'open_failed',
        `${this.name} batch ${batchId}`,
        batchHeldMessage(held.rows[0]?.owner ?? undefined, 'its lock is freed when its database session ends'),
      );
    }
    let earlier: BatchManifest | undefined;
    try {
      const where = `${this.name} batch ${batchId}`;
      earlier = await this.#db.run(`${shared ? 'joining' : resume ? 'finding' : 'recording'} batch ${batchId}`, (c) =>
        shared
          ? batchRows.join(c, this.#tables(), where, options)
          : resume
            ? batchRows.resume(c, this.#tables(), batchId, owner)
            : batchRows.record(c, this.#tables(), where, options),
      );
    } catch (error) {
      await lock.close().catch(ignore);
      throw error;
    }
    const open = this.#open.get(batchId) ?? new Set();
    this.#open.set(batchId, open.add(lock));
    return {
      batchId,
      earlier,
      openRun: (runId, sinkOptions, table) => this.#openRun(lock, batchId, runId, sinkOptions, table),
      attempts: (runId) => this.#attempts(batchId, runId),
      setAside: (runId) => this.#setAside(lock, batchId, runId),
      close: () => {
        open.delete(lock);
        if (open.size === 0 && this.#open.get(batchId) === open) this.#open.delete(batchId);
        return lock.close();
      },
    };
  }

  /**
   * Before a write for batch `batchId` that is not a run's (an answer taken, the pause): when this
   * store has the batch open, its lock, taken again after a lost connection, or the refusal that
   * another process took the batch meanwhile.
   */
  async #heldIfOpen(batchId: string): Promise<void> {
    for (const lock of this.#open.get(batchId) ?? []) await lock.held();
  }

  /** A run's attempts, the newest first: its live one, then those a resume set aside since the last overwrite. */
  async #attempts(batchId: string, runId: string): Promise<Array<{ name: string; input: AsyncIterable<Uint8Array> }>> {
    const t = this.#tables();
    const { rows } = await this.#db.run(`finding the attempts of run ${runId} of batch ${batchId}`, (client) =>
      client.query<{ run_key: string; live: boolean }>(
        `SELECT run_key, set_aside_at IS NULL AS live FROM ${t.runs} r
         WHERE batch_id = $1 AND run_id = $2 AND (set_aside_at IS NULL OR set_aside_by = 'resume')
           AND run_key > coalesce((SELECT max(run_key) FROM ${t.runs}
             WHERE batch_id = $1 AND run_id = $2 AND set_aside_by = 'overwrite'), 0)
         ORDER BY set_aside_at IS NULL DESC, run_key DESC`,
        [batchId, runId],
      ),
    );
    return rows.map((row, i) => {
      const name = `${this.name} run ${runId} of batch ${batchId}${row.live ? '' : ` (attempt set aside ${i})`}`;
      return { name, input: { [Symbol.asyncIterator]: () => this.#linesOf(row.run_key, name) } };
    });
  }

  /** Sets run `runId`'s live attempt aside, for a resume's new one. Waits for the disk: a new attempt never shares the run with it. */
  async #setAside(lock: BatchLock, batchId: string, runId: string): Promise<void> {
    const t = this.#tables();
    // Each write of the batch waits for its lock (taken again after a lost connection) before it takes a connection.
    await lock.held();
    await this.#db.run(`setting run ${runId} of batch ${batchId} aside`, (client) =>
      client.query(
        `UPDATE ${t.runs} SET set_aside_at = now(), set_aside_by = 'resume' WHERE batch_id = $1 AND run_id = $2 AND set_aside_at IS NULL`,
        [batchId, runId],
      ),
    );
  }

  async #openRun(
    lock: BatchLock,
    batchId: string,
    runId: string,
    options: JsonlHistorySinkOptions,
    table: TransitionTable<string>,
  ): Promise<RunSink> {
    const t = this.#tables();
    const startedAt = options.startedAt ?? Date.now();
    const lease = this.#db.lease();
    await lock.held();
    const key = await this.#db.run(
      `opening run ${runId} of batch ${batchId}`,
      async (client) => {
        const { rows } = await client.query<{ run_key: string }>(
          // Not waiting for the disk: the run's first durable line (its meta line with 'move', a
          // reserve line, a turn's end) flushes the log up to it, this row included.
          `WITH level AS (SELECT set_config('synchronous_commit', 'off', true))
         INSERT INTO ${t.runs} (batch_id, run_id, started_at)
         SELECT $1, $2, to_timestamp($3 / 1000.0) FROM level RETURNING run_key`,
          [batchId, runId, startedAt],
        );
        return rows[0]!.run_key;
      },
      lease,
    );
    const where = `${this.name} run ${runId} of batch ${batchId}`;
    const writer = runLineWriter(
      {
        lines: t.lines,
        runAgain: (operation, work) => lock.held().then(() => this.#db.runAgain(operation, work, lease)),
        recordEnd: (facts) => lock.held().then(() => this.#recordEnd(key, where, facts, lease)),
      },
      key,
      runId,
      where,
    );
    return RunLinesSink.open(where, writer, { ...options, startedAt, table: options.table ?? table });
  }

  /**
   * The money of an ended run a resume went on from earlier attempts, over every attempt (its
   * live lines', and those the resume set aside: `spendOfRun`), as a batch's readers count it,
   * each call's reason once. Read when listed, as the readers read it: its row has its live
   * attempt's figures only.
   */
  async #moneyOverAttempts(batchId: string, runId: string): Promise<ReturnType<typeof spendOfRun>> {
    const [live, ...older] = await this.#attempts(batchId, runId);
    // Read past a damaged line, as the readers of a batch read it: one run's lines never fail the list.
    const facts = await readRunFile(live!.name, { input: live!.input, salvage: true, onWarning: ignore });
    const spends = await attemptSpends(
      older.reverse().map((a) => ({ name: a.name, input: () => a.input })),
      // An attempt whose lines are not a run's adds nothing; a lost connection fails the list, not its money.
      { onUnreadable: (_name, error) => rethrowUnreachable(error) },
    );
    return spendOfRun(facts, facts.attempt, spends);
  }

  /** What a run's lines say of it. */
  #factsOf(key: string, where: string): Promise<RunFileFacts> {
    return readRunFile(where, { input: this.#linesOf(key, where), onWarning: ignore });
  }

  /** Records how a run ended in its row: facts the lines hold (made again from them if lost), not waiting for the disk. */
  async #recordEnd(key: string, where: string, facts: RunFileFacts, lease?: ConnectionLease): Promise<void> {
    await this.#db.runAgain(
      `recording how ${where} ended`,
      (client) =>
        client.query(
          `UPDATE ${this.#tables().runs} SET ended_at = coalesce(ended_at, now()), outcome = $2, reason = $3, cost_usd = $4, calls = $5, duration_ms = $6,
           uncertain_usd = $7, released_usd = $8, uncertain = $9, unpriced_calls = $10, unpriced = $11
         FROM (SELECT set_config('synchronous_commit', 'off', true)) AS level WHERE run_key = $1`,
          [
            key,
            facts.outcome,
            facts.reason ?? null,
            facts.costUsd,
            facts.usage?.llmCalls ?? 0,
            facts.durationMs,
            facts.uncertainUsd,
            facts.releasedUsd,
            JSON.stringify(facts.uncertain),
            facts.unpricedCalls,
            JSON.stringify(facts.unpriced),
          ],
        ),
      lease,
    );
  }

  readRun(batchId: string, runId: string): AsyncIterable<Uint8Array> {
    return { [Symbol.asyncIterator]: () => this.#runLines(batchId, runId) };
  }

  /** The lines of the run as it is now; of one set aside only when no other is left. */
  async *#runLines(batchId: string, runId: string): AsyncGenerator<Uint8Array> {
    const where = `${this.name} run ${runId} of batch ${batchId}`;
    await this.migrate();
    const t = this.#tables();
    const key = await this.#db.run(`finding run ${runId} of batch ${batchId}`, async (client) => {
      const { rows } = await client.query<{ run_key: string }>(
        `SELECT run_key FROM ${t.runs} WHERE batch_id = $1 AND run_id = $2 ORDER BY set_aside_at IS NULL DESC, run_key DESC LIMIT 1`,
        [batchId, runId],
      );
      return rows[0]?.run_key;
    });
    if (key === undefined) throw new HistoryFileError('not_found', where, 'no such run in the store');
    yield* this.#linesOf(key, where);
  }

  async readBatch(batchId: string): Promise<StoredBatch | undefined> {
    await this.migrate();
    const sql = storedBatchQueries(this.#tables());
    const { batch, rows } = await this.#db.run(`reading batch ${batchId}`, async (client) => {
      const batches = await client.query<{ manifest: BatchManifest; running: boolean }>(sql.batch, [
        batchId,
        this.schema,
      ]);
      return { batch: batches.rows[0], rows: (await client.query<AttemptRow>(sql.runs, [batchId])).rows };
    });
    if (batch === undefined) return undefined;
    const base = (runId: string): string => `${this.name} run ${runId} of batch ${batchId}`;
    return storedBatchOf(batch, rows, base, (key, name, after) => this.#linesOf(key, name, after));
  }

  async listRuns(query: StoredRunQuery = {}): Promise<StoredRun[]> {
    await this.migrate();
    return listedRuns(
      {
        name: this.name,
        db: this.#db,
        tables: this.#tables(),
        factsOf: (key, where) => this.#factsOf(key, where),
        recordEnd: (key, where, facts) => this.#recordEnd(key, where, facts),
        moneyOverAttempts: (batchId, runId) => this.#moneyOverAttempts(batchId, runId),
      },
      query,
    );
  }

  async keepAnswer(batchId: string, answer: ApprovalAnswer): Promise<KeptAnswer | undefined> {
    await this.migrate();
    return this.#db.run(`keeping an answer to run ${answer.run} of batch ${batchId}`, (c) =>
      answerRows.keep(c, this.#tables().answers, batchId, answer),
    );
  }

  async readAnswers(batchId: string): Promise<KeptAnswer[]> {
    await this.migrate();
    return this.#db.run(`reading the answers of batch ${batchId}`, (c) =>
      answerRows.read(c, this.#tables().answers, batchId),
    );
  }

  async markAnswerTaken(batchId: string, answer: ApprovalAnswer): Promise<void> {
    await this.#heldIfOpen(batchId);
    return this.#db.run(`marking an answer to run ${answer.run} of batch ${batchId} taken`, (c) =>
      answerRows.markTaken(c, this.#tables().answers, batchId, answer),
    );
  }

  async keepRaise(batchId: string, request: RaiseRequest): Promise<void> {
    await this.migrate();
    return this.#db.run(`keeping a raise of batch ${batchId}`, (c) =>
      raiseRows.keep(c, this.#tables(), batchId, request),
    );
  }

  async readRaises(batchId: string): Promise<RaiseRequest[]> {
    await this.migrate();
    return this.#db.run(`reading the raises of batch ${batchId}`, (c) => raiseRows.read(c, this.#tables(), batchId));
  }

  async keepPause(batchId: string, pause: CapPause | undefined): Promise<void> {
    await this.#heldIfOpen(batchId);
    return this.#db.run(`noting the pause of batch ${batchId}`, (c) =>
      raiseRows.keepPause(c, this.#tables(), batchId, pause),
    );
  }

  async readPause(batchId: string): Promise<CapPause | undefined> {
    await this.migrate();
    return this.#db.run(`reading the pause of batch ${batchId}`, (c) =>
      raiseRows.readPause(c, this.#tables(), batchId),
    );
  }

  /** Ends its connections. Batches still open keep their lock's connection until closed. */
  close(): Promise<void> {
    return this.#db.end();
  }

  /** A run's lines after its first `after`, each ending in a newline, a page at a time. */
  async *#linesOf(key: string, where: string, after = 0): AsyncGenerator<Uint8Array> {
    if (!(Number.isSafeInteger(after) && after >= 0))
      throw new InvalidArgumentError('afterLine', 'a whole number of lines, 0 or more', after);
    const t = this.#tables();
    for (;;) {
      const { rows } = await this.#db.run(`reading ${where}`, (client) =>
        client.query<{ line_no: number; line: string }>(
          `SELECT line_no, line FROM ${t.lines} WHERE run_key = $1 AND line_no > $2 ORDER BY line_no LIMIT ${PAGE_LINES}`,
          [key, after],
        ),
      );
      if (rows.length === 0) return;
      after = rows.at(-1)!.line_no;
      yield Buffer.from(`${rows.map((r) => r.line).join('\n')}\n`, 'utf8');
      if (rows.length < PAGE_LINES) return;
    }
  }

  #tables(): SchemaTables {
    return schemaTables(this.schema);
  }

  #connection(): ConstructorParameters<typeof Pool>[0] & object {
    return {
      connectionString: this.#url,
      connectionTimeoutMillis: this.#connectTimeoutMs,
      // Bounded on the server and on the wire: a server that stops answering fails the query.
      statement_timeout: this.#statementTimeoutMs,
      query_timeout: this.#statementTimeoutMs + this.#connectTimeoutMs,
    };
  }
}
