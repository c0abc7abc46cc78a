import type { PoolClient } from 'pg';
import { HistoryFileError } from 'agent-state-machine/history';
import { VERSION } from 'agent-state-machine';
import type { BatchManifest, StoreBatchOptions } from 'agent-state-machine/batch';
import type { SchemaTables } from './postgresSchema';
import { raiseRows } from './raiseRows';

/**
 * A store batch's row in `agent_sm_batches` as `PostgresStore.openBatch` opens it: recorded anew
 * (its runs refused or set aside, the raises asked of the batch of its id before set aside),
 * joined by the writers of one owner, or found again by a resume. `where` names the batch in
 * errors.
 */
export const batchRows = {
  /** Refuses the runs already there (or sets them aside, with `overwrite`) and records the manifest. */
  async record(
    client: PoolClient,
    t: SchemaTables,
    where: string,
    { batchId, owner, overwrite, manifest }: StoreBatchOptions,
  ): Promise<undefined> {
    const ids = manifest.tasks.map((task) => task.id);
    const { rows } = await client.query<{ run_id: string }>(
      `SELECT run_id FROM ${t.runs} WHERE batch_id = $1 AND run_id = ANY($2) AND set_aside_at IS NULL ORDER BY run_id`,
      [batchId, ids],
    );
    if (rows.length > 0 && !overwrite)
      throw new HistoryFileError(
        'file_exists',
        where,
        `the batch already holds ${rows.length === 1 ? 'run' : 'runs'} ${rows.map((r) => JSON.stringify(r.run_id)).join(', ')}; give overwriteHistory: true to set them aside, or another batchId`,
      );
    if (rows.length > 0)
      await client.query(
        `UPDATE ${t.runs} SET set_aside_at = now(), set_aside_by = 'overwrite' WHERE batch_id = $1 AND run_id = ANY($2) AND set_aside_at IS NULL`,
        [batchId, ids],
      );
    await client.query(
      `INSERT INTO ${t.batches} (batch_id, manifest, owner) VALUES ($1, $2, $3)
       ON CONFLICT (batch_id) DO UPDATE SET manifest = EXCLUDED.manifest, owner = EXCLUDED.owner`,
      [batchId, JSON.stringify({ type: 'batch', version: VERSION, ...manifest }), owner],
    );
    await raiseRows.setAside(client, t, batchId);
    return undefined;
  },

  /** Records the manifest of a shared batch unless there, and returns the batch's: refused when another owner started it. */
  async join(
    client: PoolClient,
    t: SchemaTables,
    where: string,
    { batchId, owner, manifest }: StoreBatchOptions,
  ): Promise<BatchManifest> {
    const made = await client.query(
      `INSERT INTO ${t.batches} (batch_id, manifest, owner) VALUES ($1, $2, $3) ON CONFLICT (batch_id) DO NOTHING`,
      [batchId, JSON.stringify({ type: 'batch', version: VERSION, ...manifest }), owner],
    );
    if (made.rowCount === 1) await raiseRows.setAside(client, t, batchId);
    const { rows } = await client.query<{ manifest: BatchManifest; owner: string | null }>(
      `SELECT manifest, owner FROM ${t.batches} WHERE batch_id = $1`,
      [batchId],
    );
    if (rows[0]!.owner !== owner)
      throw new HistoryFileError(
        'open_failed',
        where,
        `the batch is another batch's (${rows[0]!.owner ?? 'no owner'}), not ${owner}'s: two batches never write one batch id; give this batch another id`,
      );
    return rows[0]!.manifest;
  },

  /** The manifest batch `batchId` was started with, its owner now this one; undefined when there is no such batch. */
  async resume(
    client: PoolClient,
    t: SchemaTables,
    batchId: string,
    owner: string,
  ): Promise<BatchManifest | undefined> {
    const { rows } = await client.query<{ manifest: BatchManifest }>(
      `UPDATE ${t.batches} SET owner = $2 WHERE batch_id = $1 RETURNING manifest`,
      [batchId, owner],
    );
    return rows[0]?.manifest;
  },
};
