import type { PoolClient } from 'pg';
import type { CapPause, RaiseRequest } from 'agent-state-machine/batch';
import type { SchemaTables } from './postgresSchema';

/**
 * The raises asked of a store batch paused at its cap, in table `agent_sm_raises` (one row a
 * request, in the order kept), and the pause the batch notes for its readers, in
 * `agent_sm_pauses` (one row a paused batch). A batch recorded anew sets the raises of the batch
 * of its id before aside (kept, unread) and drops its pause.
 */
export const raiseRows = {
  async keep(client: PoolClient, t: SchemaTables, batchId: string, request: RaiseRequest): Promise<void> {
    await client.query(`INSERT INTO ${t.raises} (batch_id, max_cost_usd, asked_at) VALUES ($1, $2, $3)`, [
      batchId,
      request.maxCostUsd,
      request.at,
    ]);
  },

  async read(client: PoolClient, t: SchemaTables, batchId: string): Promise<RaiseRequest[]> {
    const { rows } = await client.query<{ max_cost_usd: number; asked_at: number }>(
      `SELECT max_cost_usd, asked_at FROM ${t.raises} WHERE batch_id = $1 AND set_aside_at IS NULL ORDER BY raise_no`,
      [batchId],
    );
    return rows.map((r) => ({ maxCostUsd: r.max_cost_usd, at: r.asked_at }));
  },

  async keepPause(client: PoolClient, t: SchemaTables, batchId: string, pause: CapPause | undefined): Promise<void> {
    if (pause === undefined) await client.query(`DELETE FROM ${t.pauses} WHERE batch_id = $1`, [batchId]);
    else
      await client.query(
        `INSERT INTO ${t.pauses} (batch_id, pause) VALUES ($1, $2) ON CONFLICT (batch_id) DO UPDATE SET pause = EXCLUDED.pause`,
        [batchId, JSON.stringify(pause)],
      );
  },

  async readPause(client: PoolClient, t: SchemaTables, batchId: string): Promise<CapPause | undefined> {
    const { rows } = await client.query<{ pause: CapPause }>(`SELECT pause FROM ${t.pauses} WHERE batch_id = $1`, [
      batchId,
    ]);
    return rows[0]?.pause;
  },

  /** A batch recorded anew: the raises and the pause of the batch of its id before are not its own. */
  async setAside(client: PoolClient, t: SchemaTables, batchId: string): Promise<void> {
    await client.query(`UPDATE ${t.raises} SET set_aside_at = now() WHERE batch_id = $1 AND set_aside_at IS NULL`, [
      batchId,
    ]);
    await client.query(`DELETE FROM ${t.pauses} WHERE batch_id = $1`, [batchId]);
  },
};
