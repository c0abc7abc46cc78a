import type { PoolClient } from 'pg';
import type { ApprovalAnswer, KeptAnswer } from 'agent-state-machine/batch';

/**
 * People's answers to the calls a store batch's runs wait on, in table `table`
 * (`agent_sm_answers`): one row a call of a run, its answer as given and when the batch took
 * it. A row is written once per wait: a second answer is refused while the first waits, or once
 * it was taken for the same wait (`waiting_since`); a call of a later wait with the same id
 * takes the row anew.
 */
export const answerRows = {
  /** Keeps `answer`: undefined once kept, or the answer the call has already (nothing kept). */
  async keep(
    client: PoolClient,
    table: string,
    batchId: string,
    answer: ApprovalAnswer,
  ): Promise<KeptAnswer | undefined> {
    const kept = await client.query(
      `INSERT INTO ${table} (batch_id, run_id, call_id, answer, waiting_since) VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (batch_id, run_id, call_id) DO UPDATE
         SET answer = EXCLUDED.answer, waiting_since = EXCLUDED.waiting_since, taken_at = NULL
         WHERE ${table}.taken_at IS NOT NULL AND ${table}.waiting_since IS DISTINCT FROM EXCLUDED.waiting_since
       RETURNING 1`,
      [batchId, answer.run, answer.callId, JSON.stringify(answer), answer.waitingSince ?? null],
    );
    if (kept.rowCount === 1) return undefined;
    const { rows } = await client.query<{ answer: ApprovalAnswer; taken: boolean }>(
      `SELECT answer, taken_at IS NOT NULL AS taken FROM ${table} WHERE batch_id = $1 AND run_id = $2 AND call_id = $3`,
      [batchId, answer.run, answer.callId],
    );
    const row = rows[0];
    // Refused, then gone (another batch of this id overwrote it): said as answered, with no answer to show.
    return row === undefined ? { ...answer, taken: true } : { ...row.answer, taken: row.taken };
  },

  /** Every answer of batch `batchId`, waiting and taken, in run then call order. */
  async read(client: PoolClient, table: string, batchId: string): Promise<KeptAnswer[]> {
    const { rows } = await client.query<{ answer: ApprovalAnswer; taken: boolean }>(
      `SELECT answer, taken_at IS NOT NULL AS taken FROM ${table} WHERE batch_id = $1 ORDER BY run_id, call_id`,
      [batchId],
    );
    return rows.map((r) => ({ ...r.answer, taken: r.taken }));
  },

  /** Marks `answer` taken, once (a row taken already, or answered anew since, is left as it is). */
  async markTaken(client: PoolClient, table: string, batchId: string, answer: ApprovalAnswer): Promise<void> {
    await client.query(
      `UPDATE ${table} SET taken_at = now()
       WHERE batch_id = $1 AND run_id = $2 AND call_id = $3 AND taken_at IS NULL AND waiting_since IS NOT DISTINCT FROM $4`,
      [batchId, answer.run, answer.callId, answer.waitingSince ?? null],
    );
  },
};
