import type { PoolClient } from 'pg';
import { createScriptedAgent, runBatch, type AgentLoop } from '../../../lib/index';
import { PostgresStore } from '../../../lib/integrations/postgres';
import { runLineWriter, type RunLineStore } from '../../../lib/integrations/postgres/runLineWriter';
import type { RunFileFacts } from '../../../lib/subpaths/history';
import { testSchema, PG_URL, type TestSchema } from '../../helpers/postgres';

let db: TestSchema;
let key: string;
beforeEach(async () => {
  db = await testSchema();
  const store = new PostgresStore(PG_URL, { schema: db.schema });
  await store.migrate();
  await store.close();
  const { rows } = await db.client.query<{ run_key: string }>(
    `INSERT INTO "${db.schema}".agent_sm_runs (batch_id, run_id, started_at) VALUES ('b', 'r', now()) RETURNING run_key`,
  );
  key = rows[0]!.run_key;
});
afterEach(() => db.drop());

/** A store whose every statement is sent twice, as when the answer to the first was lost on the way. */
function sendingTwice(ended: RunFileFacts[]): RunLineStore {
  return {
    lines: `"${db.schema}".agent_sm_run_lines`,
    runAgain: async (_operation, work) => {
      const client = db.client as unknown as PoolClient;
      await work(client);
      return work(client);
    },
    recordEnd: async (facts) => {
      ended.push(facts);
    },
  };
}

const meta = '{"type":"meta","version":"1","runId":"r","startedAt":0}';

describe('runLineWriter', () => {
  it('.append() sent again after its first sending committed leaves each line once, at its number', async () => {
    const writer = runLineWriter(sendingTwice([]), key, 'r', 'run r');
    await writer.append([meta], true);
    await writer.append(['{"type":"journal","n":1}', '{"type":"journal","n":2}'], false);
    const { rows } = await db.client.query<{ line_no: number; line: string }>(
      `SELECT line_no, line FROM "${db.schema}".agent_sm_run_lines WHERE run_key = $1 ORDER BY line_no`,
      [key],
    );
    expect(rows.map((r) => [r.line_no, r.line])).toEqual([
      [1, meta],
      [2, '{"type":"journal","n":1}'],
      [3, '{"type":"journal","n":2}'],
    ]);
  });

  it('.end() records the facts of the lines committed, read as they went, with no read of them back', async () => {
    // A real run's lines, from a store.
    const store = new PostgresStore(PG_URL, { schema: db.schema });
    const agent = (): AgentLoop =>
      createScriptedAgent({
        replies: [
          { toolCalls: [{ id: 'c1', name: 'look', input: {} }], usage: { costUsd: 0.01 } },
          { text: 'done', usage: { costUsd: 0.02 } },
        ],
        tools: { look: { output: 'seen' } },
      });
    await runBatch([{ id: 'a', input: 'go', agent }], { store, batchId: 'source', logger: false });
    const chunks: Uint8Array[] = [];
    for await (const chunk of store.readRun('source', 'a')) chunks.push(chunk);
    await store.close();
    const lines = Buffer.concat(chunks).toString('utf8').split('\n').slice(0, -1);
    expect(lines.length).toBeGreaterThan(5);

    const ended: RunFileFacts[] = [];
    const writer = runLineWriter(
      { ...sendingTwice(ended), runAgain: (_operation, work) => work(db.client as unknown as PoolClient) },
      key,
      'r',
      'run r',
    );
    for (const line of lines) await writer.append([line], false);
    // Gone from the table: the facts can only come from the lines as they were committed.
    await db.client.query(`DELETE FROM "${db.schema}".agent_sm_run_lines WHERE run_key = $1`, [key]);
    await writer.end();
    expect(ended).toHaveLength(1);
    expect(ended[0]).toMatchObject({ outcome: 'end_of_turn', ended: true, costUsd: 0.03, usage: { llmCalls: 2 } });
  });
});
