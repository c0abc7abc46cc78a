// A batch's lock in PostgreSQL when the connection that holds it ends under the batch (here:
// pg_terminate_backend, as a dropped socket or an administrator would end it). The lock goes with
// the connection; the batch takes it again before its next write, or, when another process took
// the batch meanwhile, writes no more of it.
import { Client } from 'pg';
import { DEFAULT_TABLE, runBatch, type AgentLoop } from '../../../lib/index';
import { base, script, task } from '../../helpers/storeTasks';
import type { StoreBatchOptions } from '../../../lib/subpaths/batch';
import { PostgresStore } from '../../../lib/integrations/postgres';
import { testSchema, PG_URL, type TestSchema } from '../../helpers/postgres';
import { startTcpProxy } from '../../helpers/tcpProxy';

jest.setTimeout(30_000);

let db: TestSchema;
let store: PostgresStore;
let waiter: Client;
beforeEach(async () => {
  db = await testSchema();
  store = new PostgresStore(PG_URL, { schema: db.schema, connectTimeoutMs: 2000 });
  waiter = new Client({ connectionString: PG_URL });
  waiter.on('error', () => undefined);
  await waiter.connect();
});
afterEach(async () => {
  await waiter.end().catch(() => undefined);
  await store.close();
  await db.drop();
});

const opening = (batchId: string, extra: Partial<StoreBatchOptions> = {}): StoreBatchOptions => ({
  batchId,
  owner: 'the test',
  overwrite: false,
  manifest: { startedAt: 1, concurrency: 1, limits: {}, tasks: [{ id: 'a', file: 'a' }] },
  ...extra,
});

/**
 * `waiter` asks for batch `batchId`'s lock, as another process would (waiting for it, not
 * trying): the server gives it the lock the moment its holder's session ends. Resolves with the
 * holder's pid, once the waiter is seen waiting on it, and with the waiter's lock call.
 */
async function waitForLock(batchId: string): Promise<{ holder: number; granted: Promise<unknown> }> {
  const { rows } = await waiter.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
  const me = rows[0]!.pid;
  const granted = waiter.query('SELECT pg_advisory_lock(hashtext($1), hashtext($2))', [db.schema, batchId]);
  for (;;) {
    const blocking = await db.client.query<{ pids: number[] }>('SELECT pg_blocking_pids($1) AS pids', [me]);
    const holder = blocking.rows[0]!.pids[0];
    if (holder !== undefined) return { holder, granted };
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** Ends session `pid` and waits until it is gone: its socket closed, as this process then hears. */
async function terminate(pid: number): Promise<void> {
  await db.client.query('SELECT pg_terminate_backend($1)', [pid]);
  for (;;) {
    const { rows } = await db.client.query('SELECT 1 FROM pg_stat_activity WHERE pid = $1', [pid]);
    if (rows.length === 0) return;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** The pid that holds batch `batchId`'s lock now, once it is not `not`. */
async function holderOtherThan(batchId: string, not: number): Promise<number> {
  for (;;) {
    const { rows } = await db.client.query<{ pid: number }>(
      `SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted AND objsubid = 2
       AND classid = hashtext($1)::oid AND objid = hashtext($2)::oid AND pid <> $3`,
      [db.schema, batchId, not],
    );
    if (rows[0] !== undefined) return rows[0].pid;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

describe("PostgresStore's batch lock, its connection ended under the batch", () => {
  it("is taken again when the server still runs this batch's earlier session (a socket dropped on this side)", async () => {
    const proxy = await startTcpProxy(PG_URL);
    const through = new PostgresStore(proxy.url, { schema: db.schema, connectTimeoutMs: 2000 });
    try {
      // The pool's first connection makes the tables; the lock's is the next, as the batch opens.
      await through.migrate();
      const batch = await through.openBatch(opening('b'));
      try {
        proxy.dropClientSide(1);
        // Its earlier session still holds the lock on the server: ended, not taken for another process's.
        const sink = await batch.openRun('a', { startedAt: 5 }, DEFAULT_TABLE);
        await sink.close();
        expect(await batch.attempts('a')).toHaveLength(1);
      } finally {
        await batch.close();
      }
    } finally {
      await through.close();
      await proxy.close();
    }
  });

  it('a batch closed while its lock is being taken again closes without waiting for the server', async () => {
    const proxy = await startTcpProxy(PG_URL);
    // Far past the test's own timeout: a close that waited for the retake would not end in time.
    const through = new PostgresStore(proxy.url, { schema: db.schema, connectTimeoutMs: 600_000 });
    try {
      await through.migrate();
      const batch = await through.openBatch(opening('b'));
      proxy.refuse();
      proxy.dropClientSide(1);
      // The lock is being taken again: its tries reach the proxy, which cuts them.
      while (proxy.refused === 0) await new Promise((resolve) => setTimeout(resolve, 5));
      await batch.close();
    } finally {
      await through.close();
      await proxy.close();
    }
  });

  it('is taken again before the next write: the batch writes on, and a second writer is still refused', async () => {
    const batch = await store.openBatch(opening('b'));
    try {
      const { holder, granted } = await waitForLock('b');
      // The waiter stops asking first, so that the lock is free when its holder's session ends.
      await db.client.query('SELECT pg_cancel_backend($1)', [(waiter as unknown as { processID: number }).processID]);
      await expect(granted).rejects.toThrow(/canceling statement/);
      await terminate(holder);
      // Taken again at once, on a connection of its own, before any write asks for it.
      await holderOtherThan('b', holder);
      const sink = await batch.openRun('a', { startedAt: 5 }, DEFAULT_TABLE);
      await sink.close();
      expect(await batch.attempts('a')).toHaveLength(1);
      const other = new PostgresStore(PG_URL, { schema: db.schema });
      try {
        await expect(other.openBatch(opening('b', { owner: 'another process' }))).rejects.toThrow(
          /another process is writing this batch \(the test\)/,
        );
      } finally {
        await other.close();
      }
    } finally {
      await batch.close();
    }
  });

  it('refuses every later write, naming why, when another process took the batch meanwhile', async () => {
    const batch = await store.openBatch(opening('b'));
    try {
      const sink = await batch.openRun('a', { startedAt: 5 }, DEFAULT_TABLE);
      const { holder, granted } = await waitForLock('b');
      await terminate(holder);
      // The other process has the batch's lock, given it by the server as the holder's session ended.
      await granted;
      const lost =
        /this process lost the batch's lock when its connection to PostgreSQL ended, and another process took the batch meanwhile/;
      await expect(batch.openRun('b', { startedAt: 6 }, DEFAULT_TABLE)).rejects.toThrow(lost);
      await expect(batch.setAside('a')).rejects.toThrow(lost);
      // The writes of the batch that go through the store, not a run: an answer taken, the pause.
      const answer = { run: 'a', callId: 'c1', approved: true, at: 10, waitingSince: 5, by: 'alice' };
      await expect(store.markAnswerTaken('b', answer)).rejects.toThrow(lost);
      await expect(store.keepPause('b', { at: 11, capUsd: 1, spentUsd: 1, heldUsd: 0 })).rejects.toThrow(lost);
      // The run open before is refused its next line too: its move does not reach the store.
      sink.write({
        seq: 1,
        from: 'READY',
        to: 'PROCESSING',
        description: 'a move',
        at: 7,
        durationMs: 2,
        forced: false,
      });
      await expect(Promise.resolve(sink.close())).rejects.toThrow(lost);
      const { rows } = await db.client.query<{ lines: string }>(
        `SELECT count(*) AS lines FROM "${db.schema}".agent_sm_run_lines`,
      );
      expect(Number(rows[0]!.lines)).toBe(1);
    } finally {
      await batch.close();
    }
  });

  it('in a runBatch: the run in flight and the runs after it end as error naming why, and make no call after it', async () => {
    let reached!: () => void;
    const atGate = new Promise<void>((resolve) => (reached = resolve));
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const calls: string[] = [];
    const counted = (id: string, wait: boolean) => (): AgentLoop => {
      const inner = script();
      return {
        ...inner,
        sendUserMessage: async (...args) => {
          if (wait && calls.length === 0) {
            reached();
            await gate;
          }
          calls.push(id);
          return inner.sendUserMessage(...args);
        },
      };
    };
    const batch = runBatch([task('t0', counted('t0', true)), task('t1', counted('t1', false))], {
      ...base(),
      store,
      batchId: 'b',
      concurrency: 1,
    });
    try {
      await atGate;
      const { holder, granted } = await waitForLock('b');
      await terminate(holder);
      await granted;
    } finally {
      release();
    }
    const report = await batch;
    // t0's first call was reserved before the lock went: it is made, and its answer's lines are refused.
    expect(calls).toEqual(['t0']);
    expect(report.runs.map((r) => r.outcome)).toEqual(['error', 'error']);
    for (const run of report.runs)
      expect(run.error?.message ?? run.historyError?.message).toMatch(/lost the batch's lock/);
  });
});
