import { EventEmitter } from 'node:events';
import type { PoolClient } from 'pg';
import { createScriptedAgent, runBatch, type BatchTask } from '../../../lib/index';
import { PostgresStore } from '../../../lib/integrations/postgres';
import { ConnectionLease } from '../../../lib/integrations/postgres/ConnectionLease';
import { manualClock } from '../../helpers/manualClock';
import { testSchema, PG_URL } from '../../helpers/postgres';

const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
const listener = (): void => undefined;

/** A pooled connection that counts its releases. */
function fakeClient(): PoolClient & { releases: number } {
  const client = Object.assign(new EventEmitter(), {
    releases: 0,
    release(): void {
      client.releases++;
    },
  });
  client.on('error', listener);
  return client as unknown as PoolClient & { releases: number };
}

describe('ConnectionLease', () => {
  it('.keep() gives the connection back to the pool on the next turn of the event loop, its error listener removed', async () => {
    const lease = new ConnectionLease(listener);
    const client = fakeClient();
    lease.keep(client);
    expect(client.releases).toBe(0);
    await tick();
    expect(client.releases).toBe(1);
    expect(client.listenerCount('error')).toBe(0);
    expect(lease.take()).toBeUndefined();
  });

  it('.take() before that turn takes the connection: it is not given back under the taker', async () => {
    const lease = new ConnectionLease(listener);
    const client = fakeClient();
    lease.keep(client);
    expect(lease.take()).toBe(client);
    await tick();
    expect(client.releases).toBe(0);
    expect(client.listenerCount('error')).toBe(1);
    lease.keep(client);
    await tick();
    expect(client.releases).toBe(1);
  });

  it("lets the runs of a store of one connection share it: a run's commits keep it only while they come back to back", async () => {
    const db = await testSchema();
    const store = new PostgresStore(PG_URL, { schema: db.schema, maxConnections: 1, connectTimeoutMs: 2000 });
    try {
      const tasks: BatchTask[] = Array.from({ length: 6 }, (_, i) => ({
        id: `t${i}`,
        input: 'go',
        agent: () =>
          createScriptedAgent({
            sleep: () => tick(),
            replies: [
              { toolCalls: [{ id: 'c1', name: 'look', input: {} }], usage: { costUsd: 0.01 } },
              { text: 'done', usage: { costUsd: 0.01 } },
            ],
            tools: { look: { output: 'seen' } },
          }),
      }));
      const report = await runBatch(tasks, {
        store,
        batchId: 'shared',
        concurrency: 3,
        logger: false,
        sleep: () => tick(),
        clock: manualClock().now,
      });
      expect(report.runs.map((r) => r.outcome)).toEqual(Array(6).fill('end_of_turn'));
      const { rows } = await db.client.query<{ n: string }>(
        `SELECT count(*) AS n FROM "${db.schema}".agent_sm_runs WHERE outcome = 'end_of_turn'`,
      );
      expect(Number(rows[0]!.n)).toBe(6);
    } finally {
      await store.close();
      await db.drop();
    }
  });
});
