// PostgreSQL killed (an immediate shutdown, as a crash) and started again while a batch writes
// to it, on a server of the test's own: at a gate, while a run waits for its LLM response.
import { Client } from 'pg';
import { createScriptedAgent, runBatch, type AgentLoop, type BatchOptions, type BatchTask } from '../../../lib/index';
import { PostgresStore } from '../../../lib/integrations/postgres';
import { manualClock } from '../../helpers/manualClock';
import { ownPostgres, type OwnPostgres } from '../../helpers/ownPostgres';

jest.setTimeout(120_000);

const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
const COST = { costUsd: 0.01, inputTokens: 10, outputTokens: 5 };
const IDS = ['t0', 't1', 't2', 't3', 't4'];

let server: OwnPostgres;
beforeAll(async () => {
  server = await ownPostgres();
});
afterAll(() => server?.destroy());

/** Tasks whose t2 waits, once its first call's reserve line is committed, for `gate` before it answers. */
function tasks(reached: () => void, gate: Promise<void>): BatchTask[] {
  return IDS.map((id) => ({
    id,
    input: 'go',
    agent: (): AgentLoop => {
      const inner = createScriptedAgent({
        sleep: () => tick(),
        replies: [
          { toolCalls: [{ id: 'c1', name: 'look', input: {} }], usage: COST },
          { text: 'done', usage: COST },
        ],
        tools: { look: { output: 'seen' } },
      });
      if (id !== 't2') return inner;
      let first = true;
      return Object.assign(Object.create(inner) as AgentLoop, {
        sendUserMessage: async (...args: Parameters<AgentLoop['sendUserMessage']>) => {
          if (first) {
            first = false;
            reached();
            await gate;
          }
          return inner.sendUserMessage(...args);
        },
      });
    },
  }));
}

/** Every line row of the schema, as `run:line_no:line`, read on a connection of its own. */
async function rows(schema: string): Promise<string[]> {
  const client = new Client({ connectionString: server.url });
  await client.connect();
  try {
    const { rows: found } = await client.query<{ row: string }>(
      `SELECT r.run_id || ':' || l.line_no || ':' || l.line AS row FROM "${schema}".agent_sm_run_lines l
       JOIN "${schema}".agent_sm_runs r USING (run_key) ORDER BY r.run_key, l.line_no`,
    );
    return found.map((r) => r.row);
  } finally {
    await client.end();
  }
}

describe('PostgresStore when its server is killed and started again mid-batch', () => {
  it.each(['move', 'turn'] as const)(
    'durability %s: no committed row is lost, and the batch, the run in flight included, goes on once the server is back',
    async (durability) => {
      const schema = `restart_${durability}`;
      const store = new PostgresStore(server.url, { schema, connectTimeoutMs: 2000, statementTimeoutMs: 2000 });
      let reached!: () => void;
      const atGate = new Promise<void>((resolve) => (reached = resolve));
      let release!: () => void;
      const gate = new Promise<void>((resolve) => (release = resolve));
      const options: BatchOptions = {
        logger: false,
        sleep: () => tick(),
        clock: manualClock().now,
        store,
        batchId: 'b',
        concurrency: 1,
        historyDurability: durability,
      };
      try {
        const batch = runBatch(tasks(reached, gate), options);
        await atGate;
        const before = await rows(schema);
        server.kill();
        server.start();
        release();
        const report = await batch;
        const after = await rows(schema);

        // Every row committed before the kill is there after it, as it was.
        // ('turn' commits lines between a turn's durable ones without waiting for the disk; here every
        // row read before the kill came before t2's committed reserve line, which waited for it.)
        expect(after.slice(0, before.length)).toEqual(before);
        expect(before.filter((r) => r.startsWith('t2:')).at(-1)).toMatch(/"type":"reserve"/);
        // Every task reported once and ended well: the run in flight wrote its next lines on a new
        // connection once the server was back, its call not made twice.
        expect(report.runs.map((r) => [r.id, r.outcome])).toEqual(IDS.map((id) => [id, 'end_of_turn']));
        expect(report.runs[2]!.usage.llmCalls).toBe(2);
        expect(report.totals.costUsd).toBeCloseTo(IDS.length * 2 * COST.costUsd, 10);
        // Its lines are one run's, numbered without a gap or a repeat.
        const t2 = after.filter((r) => r.startsWith('t2:')).map((r) => Number(r.split(':')[1]));
        expect(t2).toEqual(t2.map((_, i) => i + 1));
        // The runs after it were written to the server once it was back.
        for (const id of ['t3', 't4']) expect(after.some((r) => r.startsWith(`${id}:`))).toBe(true);
      } finally {
        release();
        await store.close();
      }
    },
  );

  it('a server that stays down ends the batch, every run naming why, within the bounds', async () => {
    const store = new PostgresStore(server.url, { schema: 'down', connectTimeoutMs: 500, statementTimeoutMs: 500 });
    let reached!: () => void;
    const atGate = new Promise<void>((resolve) => (reached = resolve));
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    try {
      const batch = runBatch(tasks(reached, gate), {
        logger: false,
        sleep: () => tick(),
        clock: manualClock().now,
        store,
        batchId: 'b',
        concurrency: 1,
      });
      await atGate;
      server.kill();
      release();
      const report = await batch;
      expect(report.runs.map((r) => [r.id, r.outcome])).toEqual([
        ['t0', 'end_of_turn'],
        ['t1', 'end_of_turn'],
        ['t2', 'error'],
        ['t3', 'error'],
        ['t4', 'error'],
      ]);
      for (const run of report.runs.slice(2))
        expect(run.error?.message).toMatch(new RegExp(`PostgreSQL at 127\\.0\\.0\\.1:${server.port} unreachable`));
    } finally {
      release();
      server.start();
      await store.close();
    }
  });
});
