import {
  createScriptedAgent,
  runBatch,
  type AgentLoop,
  type BatchOptions,
  type BatchTask,
  type ScriptedAgent,
  type ScriptedReply,
} from '../../../lib/index';
import { PostgresStore } from '../../../lib/integrations/postgres';
import { manualClock } from '../../helpers/manualClock';
import { testSchema, PG_URL, type TestSchema } from '../../helpers/postgres';

const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
const base = (): BatchOptions => ({ logger: false, sleep: () => tick(), clock: manualClock().now });
const COST = { inputTokens: 100, outputTokens: 10, costUsd: 0.1 };
// Two LLM calls a run: $0.20.
const REPLIES: ScriptedReply[] = [
  { toolCalls: [{ id: 'c1', name: 'bash', input: {} }], usage: COST },
  { text: 'done', usage: COST },
];

/** Six tasks whose agents say which task built them; `agents` gets each agent built, by task. */
function tasks(built: string[], agents: Array<[string, ScriptedAgent]> = []): BatchTask[] {
  return Array.from({ length: 6 }, (_, i) => ({
    id: `t${i}`,
    input: 'go',
    agent: (): AgentLoop => {
      built.push(`t${i}`);
      const agent = createScriptedAgent({ sleep: () => tick(), replies: REPLIES, tools: { bash: { output: 'ok' } } });
      agents.push([`t${i}`, agent]);
      return agent;
    },
  }));
}

/** The LLM requests the agents sent (not those a journal served), as `task:operation`. */
const requests = (agents: Array<[string, ScriptedAgent]>): string[] =>
  agents.flatMap(([id, agent]) =>
    agent.calls.filter((c) => c.op === 'sendUserMessage' || c.op === 'sendToolResults').map((c) => `${id}:${c.op}`),
  );

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

/** Run `runId`'s lines as the store holds them now. */
async function textOf(runId: string): Promise<string> {
  const chunks: Uint8Array[] = [];
  for await (const chunk of store.readRun('b', runId)) chunks.push(chunk);
  return Buffer.concat(chunks).toString('utf8');
}

/** The live run `runId`'s key and line types. */
async function linesOf(runId: string): Promise<{ key: string; types: string[] }> {
  const { rows } = await db.client.query<{ run_key: string; line: string }>(
    `SELECT r.run_key, l.line FROM "${db.schema}".agent_sm_runs r JOIN "${db.schema}".agent_sm_run_lines l USING (run_key)
     WHERE r.batch_id = 'b' AND r.run_id = $1 AND r.set_aside_at IS NULL ORDER BY l.line_no`,
    [runId],
  );
  return { key: rows[0]!.run_key, types: rows.map((r) => JSON.parse(r.line).type as string) };
}

/**
 * The store as a kill would leave it: t1 cut after its first LLM response was journaled (its
 * lines up to that one kept), t4 and t5 never opened.
 */
async function interruptedBatch(): Promise<void> {
  await runBatch(tasks([]), { ...base(), store, batchId: 'b', concurrency: 2 });
  const t1 = await linesOf('t1');
  const firstAnswer = t1.types.indexOf('llm') + 1;
  expect(firstAnswer).toBeGreaterThan(0);
  await db.client.query(`DELETE FROM "${db.schema}".agent_sm_run_lines WHERE run_key = $1 AND line_no > $2`, [
    t1.key,
    firstAnswer,
  ]);
  await db.client.query(
    `DELETE FROM "${db.schema}".agent_sm_run_lines WHERE run_key IN (SELECT run_key FROM "${db.schema}".agent_sm_runs WHERE run_id IN ('t4', 't5'))`,
  );
  await db.client.query(`DELETE FROM "${db.schema}".agent_sm_runs WHERE run_id IN ('t4', 't5')`);
}

describe('runBatch({ store, batchId, resume: true })', () => {
  it('runs only what did not end, continues a cut-off run from its journal, and counts what it spent before', async () => {
    await interruptedBatch();
    const finished = await Promise.all(['t0', 't2', 't3'].map(textOf));
    const cut = await textOf('t1');
    const built: string[] = [];
    const agents: Array<[string, ScriptedAgent]> = [];
    const report = await runBatch(tasks(built, agents), {
      ...base(),
      store,
      batchId: 'b',
      concurrency: 2,
      resume: true,
    });
    expect(built.sort()).toEqual(['t1', 't4', 't5']);
    expect(report.runs.map((r) => [r.id, r.outcome, r.resumed ?? 'new'])).toEqual([
      ['t0', 'end_of_turn', 'finished'],
      ['t1', 'end_of_turn', 'recovered'],
      ['t2', 'end_of_turn', 'finished'],
      ['t3', 'end_of_turn', 'finished'],
      ['t4', 'end_of_turn', 'new'],
      ['t5', 'end_of_turn', 'new'],
    ]);
    // t1's first response was served from its journal: only its second call left the process.
    expect(requests(agents).filter((s) => s.startsWith('t1:'))).toEqual(['t1:sendToolResults']);
    expect(report.runs[1]!.usage.costUsd).toBeCloseTo(0.2, 10);
    expect(report.totals.costUsd).toBeCloseTo(1.2, 10);
    // Ended runs untouched; the cut-off attempt set aside, kept and readable; one run in place a task.
    expect(await Promise.all(['t0', 't2', 't3'].map(textOf))).toEqual(finished);
    const { rows } = await db.client.query<{ live: boolean; by: string | null }>(
      `SELECT set_aside_at IS NULL AS live, set_aside_by AS by FROM "${db.schema}".agent_sm_runs WHERE run_id = 't1' ORDER BY run_key`,
    );
    expect(rows).toEqual([
      { live: false, by: 'resume' },
      { live: true, by: null },
    ]);
    const { rows: kept } = await db.client.query<{ text: string }>(
      `SELECT string_agg(line, E'\\n' ORDER BY line_no) || E'\\n' AS text FROM "${db.schema}".agent_sm_run_lines
       WHERE run_key = (SELECT min(run_key) FROM "${db.schema}".agent_sm_runs WHERE run_id = 't1')`,
    );
    expect(kept[0]!.text).toBe(cut);
    // Its readers (the batch's report) find t1's live attempt and the one set aside, with its lines.
    const read = await store.readBatch('b');
    expect(read?.running).toBe(false);
    const runs = [...read!.runs].sort((a, b) => a.runId.localeCompare(b.runId));
    expect(runs.map((r) => [r.run.name, r.setAside.map((a) => a.name)])).toEqual(
      ['t0', 't1', 't2', 't3', 't4', 't5'].map((id) => [
        `${store.name} run ${id} of batch b`,
        id === 't1' ? [`${store.name} run t1 of batch b (attempt set aside 1)`] : [],
      ]),
    );
    const aside: Uint8Array[] = [];
    for await (const chunk of runs[1]!.setAside[0]!.read()) aside.push(chunk);
    expect(Buffer.concat(aside).toString('utf8')).toBe(cut);
    expect((await store.listRuns({ batchId: 'b' })).map((r) => `${r.runId}:${r.outcome}`).sort()).toEqual(
      ['t0', 't1', 't2', 't3', 't4', 't5'].map((id) => `${id}:end_of_turn`),
    );
    // Resumed again, nothing is left to run.
    const again: string[] = [];
    const last = await runBatch(tasks(again), { ...base(), store, batchId: 'b', resume: true });
    expect(again).toEqual([]);
    expect(last.runs.every((r) => r.resumed === 'finished')).toBe(true);
  });

  it('never continues from a run that an overwrite set aside: that was another batch of the same id', async () => {
    // The first batch of the id: its t1 ended, both responses journaled.
    await runBatch(tasks([]), { ...base(), store, batchId: 'b' });
    // The batch that took its place, cut in t1 before its first call.
    await runBatch(tasks([]), { ...base(), store, batchId: 'b', overwriteHistory: true });
    const t1 = await linesOf('t1');
    await db.client.query(`DELETE FROM "${db.schema}".agent_sm_run_lines WHERE run_key = $1 AND line_no > $2`, [
      t1.key,
      t1.types.indexOf('reserve'),
    ]);
    const agents: Array<[string, ScriptedAgent]> = [];
    const report = await runBatch(tasks([], agents), { ...base(), store, batchId: 'b', resume: true });
    expect(report.runs[1]!.outcome).toBe('end_of_turn');
    expect(requests(agents)).toEqual(['t1:sendUserMessage', 't1:sendToolResults']);
  });

  it('refuses by name a batch the store does not hold, or other tasks than its own', async () => {
    await expect(runBatch(tasks([]), { ...base(), store, batchId: 'nope', resume: true })).rejects.toThrow(
      /resume.*has no batch "nope"/s,
    );
    await runBatch(tasks([]).slice(0, 2), { ...base(), store, batchId: 'b' });
    await expect(runBatch(tasks([]), { ...base(), store, batchId: 'b', resume: true })).rejects.toThrow(
      'it lists 2 tasks, this batch has 6',
    );
    // The refusal freed the batch's lock: the batch can be resumed at once.
    const report = await runBatch(tasks([]).slice(0, 2), { ...base(), store, batchId: 'b', resume: true });
    expect(report.runs.map((r) => r.resumed)).toEqual(['finished', 'finished']);
  });
});
