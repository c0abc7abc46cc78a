import type { RunFileFacts } from 'agent-state-machine/history';
import type { spendOfRun } from 'agent-state-machine/internal';
import type { StoredRun, StoredRunQuery } from 'agent-state-machine/batch';
import { storedRunOf, type StoredRunRow } from './storedRunRow';
import type { PostgresPool } from './PostgresPool';
import type { SchemaTables } from './postgresSchema';

/** What listing runs needs of its store: its connections, its tables, and how it reads and records a run. */
export interface RunListingStore {
  readonly name: string;
  readonly db: PostgresPool;
  readonly tables: SchemaTables;
  /** What a run's lines say of it. */
  factsOf(key: string, where: string): Promise<RunFileFacts>;
  /** Records how a run ended in its row. */
  recordEnd(key: string, where: string, facts: RunFileFacts): Promise<void>;
  /** An ended run's money over every attempt a resume set aside. */
  moneyOverAttempts(batchId: string, runId: string): Promise<ReturnType<typeof spendOfRun>>;
}

/**
 * The runs `query` picks, newest first (`RunStore.listRuns`). Before it reads the rows, it makes
 * again what a row may lack: the end of a run whose process died after its last line, and the
 * three figures of a row older than their columns.
 */
export async function listedRuns(store: RunListingStore, query: StoredRunQuery): Promise<StoredRun[]> {
  const { batchId, outcome, failed, since, limit = 1000 } = query;
  const where = ['set_aside_at IS NULL'];
  const values: unknown[] = [];
  if (batchId !== undefined) where.push(`batch_id = $${values.push(batchId)}`);
  if (since !== undefined) where.push(`started_at >= to_timestamp($${values.push(since)} / 1000.0)`);
  await endsMadeAgain(store, where, values);
  await figuresMadeAgain(store, where, values);
  if (outcome !== undefined)
    where.push(
      `coalesce(outcome, 'incomplete') = ANY($${values.push(typeof outcome === 'string' ? [outcome] : outcome)})`,
    );
  // A run's reason is recorded when its last turn ended in an error state of its own table.
  if (failed === true) where.push('outcome IS NOT NULL AND reason IS NOT NULL');
  const { rows } = await store.db.run('listing runs', (client) =>
    client.query<StoredRunRow>(
      `SELECT batch_id, run_id, (extract(epoch FROM started_at) * 1000)::bigint AS started_ms, outcome, reason, cost_usd,
         uncertain_usd, released_usd, uncertain, unpriced_calls, unpriced, calls, duration_ms
       FROM ${store.tables.runs} WHERE ${where.join(' AND ')} ORDER BY started_at DESC, run_key DESC LIMIT $${values.push(limit)}`,
      values,
    ),
  );
  return overAttempts(store, rows, batchId);
}

/**
 * The runs of `rows` as listed: an ended run a resume went on from earlier attempts counts its
 * money over every attempt, read from its lines when listed (its row has its live attempt's).
 */
async function overAttempts(
  store: RunListingStore,
  rows: readonly StoredRunRow[],
  batchId: string | undefined,
): Promise<StoredRun[]> {
  if (rows.every((r) => r.outcome === null)) return rows.map(storedRunOf);
  const { rows: aside } = await store.db.run('finding the runs a resume went on', (client) =>
    client.query<{ batch_id: string; run_id: string }>(
      `SELECT DISTINCT batch_id, run_id FROM ${store.tables.runs} WHERE set_aside_by = 'resume'${batchId === undefined ? '' : ' AND batch_id = $1'}`,
      batchId === undefined ? [] : [batchId],
    ),
  );
  const resumed = new Set(aside.map((r) => JSON.stringify([r.batch_id, r.run_id])));
  const runs: StoredRun[] = [];
  for (const row of rows) {
    const run = storedRunOf(row);
    if (row.outcome === null || !resumed.has(JSON.stringify([row.batch_id, row.run_id]))) {
      runs.push(run);
      continue;
    }
    const money = await store.moneyOverAttempts(row.batch_id, row.run_id);
    runs.push({ ...run, ...money, uncertain: [...money.uncertain], unpriced: [...money.unpriced] });
  }
  return runs;
}

/**
 * The runs `where` picks whose row says no end (in flight, or their process died after the
 * last line and before the row was told): those whose lines ended get their row's facts from them.
 */
function endsMadeAgain(store: RunListingStore, where: readonly string[], values: readonly unknown[]): Promise<void> {
  return madeAgain(store, 'finding runs not ended', [...where, 'outcome IS NULL'], values, (facts) => facts.ended);
}

/**
 * The ended runs `where` picks whose row predates the columns of uncertain and released money,
 * or of calls of unknown cost (NULL there): their row gets the figures from their lines, once,
 * as a run's end records them.
 */
function figuresMadeAgain(store: RunListingStore, where: readonly string[], values: readonly unknown[]): Promise<void> {
  const older = [...where, 'outcome IS NOT NULL', '(uncertain_usd IS NULL OR unpriced_calls IS NULL)'];
  return madeAgain(store, 'finding runs ended before the three figures', older, values, () => true);
}

/** Records again, from their lines, how the runs `where` picks ended: those whose facts `keep` takes. A run whose lines cannot be read is left as it is. */
async function madeAgain(
  store: RunListingStore,
  operation: string,
  where: readonly string[],
  values: readonly unknown[],
  keep: (facts: RunFileFacts) => boolean,
): Promise<void> {
  const { rows } = await store.db.run(operation, (client) =>
    client.query<{ run_key: string; batch_id: string; run_id: string }>(
      `SELECT run_key, batch_id, run_id FROM ${store.tables.runs} WHERE ${where.join(' AND ')}`,
      [...values],
    ),
  );
  for (const r of rows) {
    const name = `${store.name} run ${r.run_id} of batch ${r.batch_id}`;
    const facts = await store.factsOf(r.run_key, name).catch(() => undefined);
    if (facts !== undefined && keep(facts)) await store.recordEnd(r.run_key, name, facts);
  }
}
