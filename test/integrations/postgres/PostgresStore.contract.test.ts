// The RunStore contract (test/helpers/storeContract.ts) on PostgresStore, each test in a schema
// of its own.
import { PostgresStore } from '../../../lib/integrations/postgres';
import { PG_URL, testSchema } from '../../helpers/postgres';
import { storeContract } from '../../helpers/storeContract';

storeContract('PostgresStore', async () => {
  const db = await testSchema();
  const store = new PostgresStore(PG_URL, { schema: db.schema });
  const other = new PostgresStore(PG_URL, { schema: db.schema });
  return {
    store,
    other,
    cut: async (batchId, runId, keep) => {
      const runs = `"${db.schema}".agent_sm_runs`;
      const lines = `"${db.schema}".agent_sm_run_lines`;
      const key = `(SELECT run_key FROM ${runs} WHERE batch_id = $1 AND run_id = $2 AND set_aside_at IS NULL)`;
      await db.client.query(`DELETE FROM ${lines} WHERE run_key = ${key} AND line_no > $3`, [batchId, runId, keep]);
      if (keep === 0)
        await db.client.query(`DELETE FROM ${runs} WHERE batch_id = $1 AND run_id = $2 AND set_aside_at IS NULL`, [
          batchId,
          runId,
        ]);
    },
    drop: async () => {
      await Promise.all([store.close(), other.close()]);
      await db.drop();
    },
  };
});
