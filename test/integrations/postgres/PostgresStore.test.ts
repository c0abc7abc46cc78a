import { createScriptedAgent, runBatch, type AgentLoop, type BatchTask, type FrameworkTask } from '../../../lib/index';
import { PostgresStore, PostgresUnreachableError } from '../../../lib/integrations/postgres';
import { manualClock } from '../../helpers/manualClock';
import { base, failing, script, task, tick } from '../../helpers/storeTasks';
import { testSchema, PG_URL, type TestSchema } from '../../helpers/postgres';
import { freePort } from '../../helpers/redis';
import { startTcpProxy } from '../../helpers/tcpProxy';
import { threeFiguresTask, THREE_FIGURES } from '../../helpers/threeFigures';

let db: TestSchema;
let store: PostgresStore;
beforeEach(async () => {
  db = await testSchema();
  store = new PostgresStore(PG_URL, { schema: db.schema });
});
afterEach(async () => {
  await store.close();
  await db.drop();
});

/** A run's lines as the store keeps them, as text. */
async function textOf(batchId: string, runId: string): Promise<string> {
  const chunks: Uint8Array[] = [];
  for await (const chunk of store.readRun(batchId, runId)) chunks.push(chunk);
  return Buffer.concat(chunks).toString('utf8');
}

describe('PostgresStore', () => {
  it('names a run as the store does, and keeps its reserve lines (the rest of the contract: PostgresStore.contract.test.ts)', async () => {
    const inStore = await runBatch([task('a'), failing('b')], { ...base(), store, batchId: 'nightly' });
    expect(inStore.runs[0]!.historyFile).toBe(`${store.name} run a of batch nightly`);
    const chunks: Uint8Array[] = [];
    for await (const chunk of store.readRun('nightly', 'a')) chunks.push(chunk);
    expect(Buffer.concat(chunks).toString('utf8')).toContain('"type":"reserve"');
  });
  it("commits a run's reserve line before its LLM call starts", async () => {
    const seenAtCall: string[][] = [];
    const agent = (): AgentLoop => {
      const inner = script();
      return {
        ...inner,
        sendUserMessage: async (message, ctx) => {
          // Read from another connection: only what is committed is seen.
          const { rows } = await db.client.query<{ line: string }>(
            `SELECT line FROM "${db.schema}".agent_sm_run_lines ORDER BY line_no`,
          );
          seenAtCall.push(rows.map((r) => JSON.parse(r.line).type as string));
          return inner.sendUserMessage(message, ctx);
        },
      };
    };
    // 'none' and group commit: only the reserve line forces a commit, and it does, with what came before it.
    const report = await runBatch([task('a', agent)], {
      ...base(),
      store,
      batchId: 'b',
      historyDurability: 'none',
      historyGroupCommit: { maxLines: 1000, maxDelayMs: 60_000 },
    });
    expect(report.runs[0]!.outcome).toBe('end_of_turn');
    expect(seenAtCall).toHaveLength(1);
    expect(seenAtCall[0]![0]).toBe('meta');
    expect(seenAtCall[0]!.at(-1)).toBe('reserve');
  });

  it('keeps the three figures of money apart in a run row, and makes them from the lines of a row ended before their columns', async () => {
    await runBatch([threeFiguresTask('m', tick)], { ...base(), ...THREE_FIGURES, store, batchId: 'money' });
    const figures = {
      outcome: 'end_of_turn',
      calls: 3,
      costUsd: expect.closeTo(0.0106, 10),
      uncertainUsd: expect.closeTo(0.01, 10),
      releasedUsd: expect.closeTo(0.01, 10),
      uncertain: [{ why: 'it failed after the request may have left (HTTP 500)', calls: 1 }],
    };
    expect(await store.listRuns({ batchId: 'money' })).toEqual([expect.objectContaining(figures)]);
    // A store made before the three figures: its table has no such columns, its row no figures.
    const t = `"${db.schema}".agent_sm_runs`;
    await db.client.query(
      `ALTER TABLE ${t} DROP COLUMN uncertain_usd, DROP COLUMN released_usd, DROP COLUMN uncertain`,
    );
    const later = new PostgresStore(PG_URL, { schema: db.schema });
    try {
      // Migrated on first use (the columns added, empty), and the row's figures made from its lines.
      expect(await later.listRuns({ batchId: 'money' })).toEqual([expect.objectContaining(figures)]);
      const { rows } = await db.client.query(`SELECT cost_usd, uncertain_usd, released_usd, uncertain FROM ${t}`);
      expect(rows).toEqual([
        {
          cost_usd: expect.closeTo(0.0106, 10),
          uncertain_usd: expect.closeTo(0.01, 10),
          released_usd: expect.closeTo(0.01, 10),
          uncertain: figures.uncertain,
        },
      ]);
    } finally {
      await later.close();
    }
  });

  it('makes the calls of unknown cost from the lines of a row ended before their columns', async () => {
    const unpriced = (): AgentLoop =>
      createScriptedAgent({
        sleep: () => tick(),
        replies: [{ text: 'ok', usage: { inputTokens: 10, outputTokens: 5 }, model: 'm1' }],
      });
    await runBatch([task('u', unpriced)], { ...base(), store, batchId: 'money' });
    const figures = {
      unpricedCalls: 1,
      unpriced: [{ why: 'no `pricing` was given, so the cost of m1 is unknown', calls: 1 }],
    };
    expect(await store.listRuns({ batchId: 'money' })).toEqual([expect.objectContaining(figures)]);
    // A store made before the columns: its row says nothing of them.
    const t = `"${db.schema}".agent_sm_runs`;
    await db.client.query(`ALTER TABLE ${t} DROP COLUMN unpriced_calls, DROP COLUMN unpriced`);
    const later = new PostgresStore(PG_URL, { schema: db.schema });
    try {
      expect(await later.listRuns({ batchId: 'money' })).toEqual([expect.objectContaining(figures)]);
      const { rows } = await db.client.query(`SELECT unpriced_calls, unpriced FROM ${t}`);
      expect(rows).toEqual([{ unpriced_calls: 1, unpriced: figures.unpriced }]);
    } finally {
      await later.close();
    }
  });

  it("makes a run's end again from its lines when its process died before its row was told", async () => {
    await runBatch([task('a'), failing('b')], { ...base(), store, batchId: 'cut' });
    const t = `"${db.schema}".agent_sm_runs`;
    const before = await db.client.query(
      `SELECT run_id, outcome, reason, cost_usd, calls, duration_ms FROM ${t} ORDER BY run_id`,
    );
    // As a process killed between the run's last line and the row's update leaves it.
    await db.client.query(
      `UPDATE ${t} SET outcome = NULL, reason = NULL, cost_usd = 0, calls = 0, duration_ms = 0, ended_at = NULL`,
    );
    expect((await store.listRuns({ outcome: 'error' })).map((r) => r.runId)).toEqual(['b']);
    expect((await store.listRuns({ outcome: 'incomplete' })).map((r) => r.runId)).toEqual([]);
    const after = await db.client.query(
      `SELECT run_id, outcome, reason, cost_usd, calls, duration_ms FROM ${t} ORDER BY run_id`,
    );
    expect(after.rows).toEqual(before.rows);
  });

  it('refuses a batch id that already holds the runs, naming them, unless overwriteHistory sets them aside', async () => {
    await runBatch([task('a'), task('b')], { ...base(), store, batchId: 'x' });
    let calls = 0;
    const counted = (id: string): BatchTask =>
      task(id, () => {
        calls += 1;
        return script();
      });
    await expect(runBatch([counted('a'), counted('b')], { ...base(), store, batchId: 'x' })).rejects.toThrow(
      /already holds runs "a", "b"/,
    );
    expect(calls).toBe(0);
    await runBatch([failing('a')], { ...base(), store, batchId: 'x', overwriteHistory: true });
    const runs = await store.listRuns({ batchId: 'x' });
    expect(runs.map((r) => `${r.runId}:${r.outcome}`).sort()).toEqual(['a:error', 'b:end_of_turn']);
    // The run set aside is kept.
    const { rows } = await db.client.query(`SELECT count(*)::int AS n FROM "${db.schema}".agent_sm_runs`);
    expect(rows[0].n).toBe(3);
    // Its readers read the batch that took its place: the set-aside run was another batch's, not an attempt.
    const read = await store.readBatch('x');
    expect(read?.manifest.tasks.map((t) => t.id)).toEqual(['a']);
    expect(read?.runs.map((r) => [r.runId, r.setAside.length])).toEqual([
      ['b', 0],
      ['a', 0],
    ]);
  });

  it('lets the shared writers of one owner (a distributed batch) hold a batch together, and no one else', async () => {
    const other = new PostgresStore(PG_URL, { schema: db.schema });
    const join = (owner: string, from = other, tasks = ['a', 'b']) =>
      from.openBatch({
        batchId: 'dist',
        owner,
        overwrite: false,
        shared: true,
        manifest: { startedAt: 1, concurrency: 0, limits: {}, tasks: tasks.map((id) => ({ id, file: id })) },
      });
    try {
      // The first records the manifest; the next of the same owner joins and finds it, not its own.
      const producer = await join('redis/q/dist');
      expect(producer.earlier?.tasks.map((t) => t.id)).toEqual(['a', 'b']);
      const worker = await join('redis/q/dist', store, ['a']);
      expect(worker.earlier?.tasks.map((t) => t.id)).toEqual(['a', 'b']);
      // A run batch of that id is refused while they hold it; another owner is refused the batch for good.
      await expect(runBatch([task('a')], { ...base(), store, batchId: 'dist' })).rejects.toThrow(
        /another process is writing this batch/,
      );
      await expect(join('other-redis/q/dist', store)).rejects.toThrow(
        "the batch is another batch's (redis/q/dist), not other-redis/q/dist's: two batches never write one batch id",
      );
      expect((await other.readBatch('dist'))?.running).toBe(true);
      await producer.close();
      expect((await other.readBatch('dist'))?.running).toBe(true);
      await worker.close();
      expect((await other.readBatch('dist'))?.running).toBe(false);
      await expect(join('other-redis/q/dist', store)).rejects.toThrow(/another batch's \(redis\/q\/dist\)/);
    } finally {
      await other.close();
    }
  });
});

describe('PostgresStore with framework tasks', () => {
  /** A framework's loop of one model call, reporting to the mirror; `seen` gets the committed lines' types at the request. */
  const frameworkTask = (id: string, seen: string[][]): FrameworkTask => ({
    id,
    input: 'go',
    drive: async (mirror) => {
      const stop = await mirror.modelCallStart({ inputTokens: 10, maxOutputTokens: 10, model: 'm' });
      if (stop !== undefined) return;
      const { rows } = await db.client.query<{ line: string }>(
        `SELECT line FROM "${db.schema}".agent_sm_run_lines ORDER BY line_no`,
      );
      seen.push(rows.map((r) => JSON.parse(r.line).type as string));
      mirror.modelResponse({ text: 'done', usage: { inputTokens: 10, outputTokens: 2 } });
    },
  });

  it("commits the mirror's reserve line before the framework's model call", async () => {
    const seen: string[][] = [];
    const report = await runBatch([frameworkTask('f', seen)], {
      logger: false,
      clock: manualClock().now,
      store,
      batchId: 'fw',
      historyDurability: 'none',
      historyGroupCommit: true,
    });
    expect(report.runs[0]!.outcome).toBe('end_of_turn');
    expect(seen).toHaveLength(1);
    expect(seen[0]!.at(-1)).toBe('reserve');
    expect(await textOf('fw', 'f')).toContain('"type":"llm"');
  });

  it("makes no model call when the mirror's reserve line cannot be committed", async () => {
    const proxy = await startTcpProxy(PG_URL);
    const { port } = new URL(proxy.url);
    const flaky = new PostgresStore(proxy.url, {
      schema: db.schema,
      connectTimeoutMs: 500,
      statementTimeoutMs: 1000,
    });
    const seen: string[][] = [];
    const cutting: FrameworkTask = {
      ...frameworkTask('f', seen),
      drive: async (mirror, ctx) => {
        proxy.cut();
        await proxy.close();
        return frameworkTask('f', seen).drive(mirror, ctx);
      },
    };
    try {
      const report = await runBatch([cutting], {
        logger: false,
        clock: manualClock().now,
        store: flaky,
        batchId: 'fw-cut',
      });
      expect(report.runs[0]!.outcome).toBe('error');
      expect(report.runs[0]!.error?.message).toMatch(
        new RegExp(`the ledger's reserve line failed: .*PostgreSQL at 127\\.0\\.0\\.1:${port} unreachable`),
      );
      expect(seen).toEqual([]);
    } finally {
      await flaky.close();
    }
  });
});

describe('PostgresStore fails closed', () => {
  it('makes no LLM call when PostgreSQL is not there, naming host:port and how long it waited', async () => {
    const port = await freePort();
    const down = new PostgresStore(`postgres://postgres@127.0.0.1:${port}/postgres`, { connectTimeoutMs: 1000 });
    let calls = 0;
    try {
      const error: unknown = await runBatch(
        [
          task('a', () => {
            calls += 1;
            return script();
          }),
        ],
        { ...base(), store: down },
      ).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(PostgresUnreachableError);
      expect((error as Error).message).toMatch(
        new RegExp(`^PostgreSQL at 127\\.0\\.0\\.1:${port} unreachable: creating its tables had no answer for \\d+ ms`),
      );
      expect(calls).toBe(0);
    } finally {
      await down.close();
    }
  });

  it('makes no LLM call whose reserve line was not committed: the connection lost mid-run ends the run as an error', async () => {
    const proxy = await startTcpProxy(PG_URL);
    const { port } = new URL(proxy.url);
    const flaky = new PostgresStore(proxy.url, {
      schema: db.schema,
      connectTimeoutMs: 500,
      statementTimeoutMs: 1000,
      maxConnections: 1,
    });
    const agent = createScriptedAgent({ sleep: () => tick(), replies: [{ text: 'done' }] });
    try {
      const report = await runBatch([task('a', () => agent)], {
        ...base(),
        store: flaky,
        batchId: 'cut',
        // The run's sink is open (its meta line committed): the server goes away before the first call.
        onRun: () => {
          proxy.cut();
          void proxy.close();
        },
      });
      const run = report.runs[0]!;
      expect(run.outcome).toBe('error');
      expect(run.error?.message).toMatch(
        new RegExp(`the ledger's reserve line failed: .*PostgreSQL at 127\\.0\\.0\\.1:${port} unreachable: committing`),
      );
      expect(agent.calls.filter((c) => c.op === 'sendUserMessage')).toHaveLength(0);
    } finally {
      await flaky.close();
    }
  });
});
