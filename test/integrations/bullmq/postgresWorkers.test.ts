// A distributed batch whose records live in PostgreSQL alone: three worker processes write
// every run to one schema, the producer records the manifest there. The local billing server
// holds one request (a run's second call, its first answered and journaled) for good; the
// worker that sent it and the producer are then SIGKILLed. A producer started again with the
// same batch id gets the report: the lost run is retried (`retryLostRuns: 1`) on another
// worker, continuing from its journal in the store — its answered call served, not sent again.
// The built `agent-sm` then answers `runs`, `inspect` and `report` from the database alone.
import type { ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Redis } from 'ioredis';
import { loadHistory, validateHistory } from '../../../lib/subpaths/history';
import { batchKeys } from '../../../lib/integrations/bullmq/batchKeys';
import { RedisBudget, startBatchWorker, submitBatch } from '../../../lib/integrations/bullmq/index';
import { PostgresStore } from '../../../lib/integrations/postgres';
import { buildCli, buildLibrary, runBuiltCli } from '../../helpers/builtCli';
import { billingServer, CALL_USD, type ChatBody } from '../../helpers/killableBatch';

import { PG_URL, storedRuns, testSchema, type TestSchema } from '../../helpers/postgres';
import { deletePrefix, releaseRedis, testRedisUrl, uniquePrefix } from '../../helpers/redis';
import { agentFromPayload } from './fixtures/agentFromPayload';
import type { BillingPayload } from './fixtures/billingLoop';
import { spawnProducer } from './fixtures/spawnProducer';
import { spawnWorker, stopAll } from './fixtures/spawnWorker';

jest.setTimeout(60_000);

const TASKS = 12;
const BATCH = 'pg-night';
const IDS = Array.from({ length: TASKS }, (_, i) => `task-${i}`);

let url: string;
let db: TestSchema;
beforeAll(async () => {
  url = await testRedisUrl();
  buildCli();
  // The executable loads the postgres subpath, which loads the main entry and the history subpath.
  buildLibrary({
    index: 'lib/index.ts',
    'history/index': 'lib/subpaths/history.ts',
    'postgres/index': 'lib/integrations/postgres/index.ts',
  });
}, 120_000);
beforeEach(async () => {
  db = await testSchema();
});
afterEach(() => db.drop());
afterAll(() => releaseRedis());

/** The task a request is for: its user message is `task <i>`. */
function taskOf(body: ChatBody): number {
  const user = body.messages.find((m) => m.role === 'user');
  const match = /^task (\d+)$/.exec(typeof user?.content === 'string' ? user.content : '');
  if (match === null) throw new Error(`no task in ${JSON.stringify(body.messages)}`);
  return Number(match[1]);
}

async function* once(chunk: Uint8Array): AsyncGenerator<Uint8Array> {
  yield chunk;
}

interface ReportRow {
  id: string;
  outcome: string;
  attempt?: number;
  worker?: string;
  resumed?: string;
  transitions: number;
  costUsd: number;
  uncertainUsd: number;
  uncertain?: Array<{ why: string; calls: number }>;
  historyFile?: string;
}

describe('a distributed batch on PostgresStore, a worker and the producer SIGKILLed', () => {
  it('resumes from the database: every task reported once, every run in the store, nothing paid twice, and agent-sm answers from the database with no file', async () => {
    const prefix = uniquePrefix('pgworkers');
    // Held: the first second call after 6 answered requests, so that other runs have ended, and its run's first answer is journaled.
    const llm = await billingServer(6, { holdOne: true });
    const workers = new Map<string, ChildProcess>();
    const producers: ChildProcess[] = [];
    const redis = new Redis(url);
    const cwd = fs.mkdtempSync(path.join(os.tmpdir(), 'asm-pgworkers-'));
    const store = new PostgresStore(PG_URL, { schema: db.schema });
    try {
      const payload: BillingPayload = {
        // Each call's hold (2000 output tokens at $5/M, and its input) is more than the $0.01 the server bills it.
        billing: { baseURL: llm.server.baseURL, maxTokens: 2000, timeoutMs: 20_000, lookup: true },
      };
      const workerEnv = {
        REDIS_URL: url,
        QUEUE: 'runs',
        PREFIX: prefix,
        CONCURRENCY: '2',
        LOCK_MS: '4000',
        STALL_MS: '1000',
        LOCAL_PRICING: '1',
        STORE_URL: PG_URL,
        PG_SCHEMA: db.schema,
      };
      const started = await Promise.all(['w1', 'w2', 'w3'].map((id) => spawnWorker({ ...workerEnv, WORKER_ID: id })));
      started.forEach((child, i) => workers.set(`w${i + 1}`, child));
      const producerEnv = {
        REDIS_URL: url,
        QUEUE: 'runs',
        PREFIX: prefix,
        BATCH_ID: BATCH,
        N: String(TASKS),
        CAP: '1',
        PAYLOAD: JSON.stringify(payload),
        STORE_URL: PG_URL,
        PG_SCHEMA: db.schema,
        RETRY_LOST: '1',
      };
      const first = spawnProducer(producerEnv);
      producers.push(first.child);
      const held = taskOf(await llm.heldRequest);
      const heldId = `task-${held}`;

      // The worker with the held run in flight (Redis says which started it), and the producer: SIGKILLed.
      const keys = batchKeys(prefix, 'runs', BATCH);
      const startedBy = JSON.parse((await redis.hget(keys.started, String(held)))!) as { w: string; a: number };
      expect(startedBy.a).toBe(1);
      const victim = workers.get(startedBy.w)!;
      await stopAll([victim, first.child]);
      workers.delete(startedBy.w);
      // What reached the store before the kill: the held run, cut off, and the answers journaled.
      const cut = await store.listRuns({ batchId: BATCH });
      expect(cut.find((r) => r.runId === heldId)?.outcome).toBe('incomplete');
      const left = [...(await storedRuns(store, BATCH, IDS)).values()].join('\n');
      llm.resume();

      // Started again: a worker in place of the killed one, and the producer with the same batch id.
      workers.set('w4', await spawnWorker({ ...workerEnv, WORKER_ID: 'w4' }));
      const second = spawnProducer(producerEnv);
      producers.push(second.child);
      const report = JSON.parse((await second.next(/^report (.*)$/))[1]!) as {
        runs: ReportRow[];
        totals: { costUsd: number };
        budget: { costUsd: number; uncertainUsd: number };
      };

      // Nothing paid twice: no request whose answer reached the store was sent again (the retried
      // run's first call was served from its journal). Only an answer lost with the killed worker
      // (its other slot's, on the wire when it died) may have been asked again: at most one.
      const hashes = llm.answered.map((a) => a.hash);
      expect(hashes.length).toBeGreaterThanOrEqual(2 * TASKS);
      const again = llm.answered.filter((a, i) => hashes.indexOf(a.hash) !== i);
      expect(again.length).toBeLessThanOrEqual(1);
      for (const answer of again) {
        const first = llm.answered.find((a) => a.hash === answer.hash)!;
        expect({ first, inStore: left.includes(`"${first.mark}"`) }).toEqual({ first, inStore: false });
      }
      // Every task reported once, all ended; the lost run retried on another worker, continued from its journal.
      expect(report.runs.map((r) => r.id)).toEqual(IDS);
      expect(report.runs.filter((r) => r.outcome !== 'end_of_turn')).toEqual([]);
      const retried = report.runs.find((r) => r.id === heldId)!;
      expect(retried).toMatchObject({ attempt: 2, resumed: 'recovered' });
      expect(retried.worker).not.toBe(startedBy.w);
      for (const run of report.runs) expect(run.historyFile).toBe(`${store.name} run ${run.id} of batch ${BATCH}`);

      // What was paid is counted: the runs' spend covers every answer billed (one lost with its worker at its hold).
      const counted = report.runs.reduce((sum, r) => sum + r.costUsd, 0);
      expect(counted).toBeGreaterThanOrEqual(hashes.length * CALL_USD - 1e-9);
      expect(retried.costUsd).toBeGreaterThanOrEqual(2 * CALL_USD - 1e-9);
      // The batch's budget in Redis counts exactly what the runs say they spent. A takeover cannot
      // tell a dead worker from one that lives on (docs/cap-guarantees.md), so it charges the
      // killed attempt's call holds at their worst case (the run's credit): the run taken over
      // reports that credit as uncertain, with why — whether or not its reserve line reached the
      // store before the kill.
      expect(report.budget.costUsd).toBeCloseTo(report.totals.costUsd, 9);
      expect(report.budget.uncertainUsd).toBeCloseTo(
        report.runs.reduce((sum, r) => sum + r.uncertainUsd, 0),
        9,
      );
      expect(report.totals.costUsd).toBeCloseTo(counted, 9);
      const credits = await redis.hgetall(keys.runUsage);
      const takenOver = report.runs.filter((r) => Number(credits[`${IDS.indexOf(r.id)}:zc`] ?? 0) > 0);
      expect(takenOver.map((r) => r.id)).toContain(heldId);
      for (const run of takenOver) {
        const credit = Number(credits[`${IDS.indexOf(run.id)}:zc`]);
        expect(run.attempt).toBe(2);
        expect(run.uncertainUsd).toBeGreaterThanOrEqual(credit - 1e-9);
        expect(run.uncertain).toContainEqual({
          why: "taken over: attempt 1's call held at its worst case, its charge never reached the batch's budget",
          calls: 1,
        });
      }
      // And no hold the killed worker left in Redis stays there: each went as its run's spend was charged.
      expect(await redis.hget(keys.budget, 'hc')).toBeNull();
      expect(Object.keys(await redis.hgetall(keys.runUsage)).filter((f) => /:h[cw]$/.test(f))).toEqual([]);

      // Every record of every run is in the database: each run valid, its moves all there, the cut-off attempt kept.
      const listed = await store.listRuns({ batchId: BATCH });
      expect(listed.map((r) => `${r.runId}:${r.outcome}`).sort()).toEqual(IDS.map((id) => `${id}:end_of_turn`).sort());
      // The store's figures of each run are the report's, the credit in the taken-over run's
      // records (it goes on from the money Redis counts for it) — except for a run whose every
      // answer was journaled before the kill: served them all, it never goes live, and its records
      // keep the answers' prices where Redis holds the last one's call at its worst case. The
      // store then says less than the report, by at most that credit.
      for (const run of report.runs) {
        const row = listed.find((r) => r.runId === run.id)!;
        const credit = Number(credits[`${IDS.indexOf(run.id)}:zc`] ?? 0);
        if (credit === 0 || row.costUsd >= run.costUsd - 1e-9)
          expect({ id: run.id, cost: row.costUsd, uncertain: row.uncertainUsd }).toEqual({
            id: run.id,
            cost: expect.closeTo(run.costUsd, 9),
            uncertain: expect.closeTo(run.uncertainUsd, 9),
          });
        else {
          // Continued from its journal, or found finished: its last line reached the store just
          // before the kill, its report not Redis (the attempt then reports from its records).
          expect(['recovered', 'finished']).toContain(run.resumed);
          expect(run.costUsd - row.costUsd).toBeLessThanOrEqual(credit + 1e-9);
        }
      }
      for (const run of report.runs) {
        const chunks: Uint8Array[] = [];
        for await (const chunk of store.readRun(BATCH, run.id)) chunks.push(chunk);
        const history = await loadHistory(run.id, { input: once(Buffer.concat(chunks)) });
        expect(validateHistory(history.entries)).toMatchObject({ ok: true });
        expect(history.records).toHaveLength(run.transitions);
      }
      const { rows } = await db.client.query<{ n: string }>(
        `SELECT count(*) AS n FROM "${db.schema}".agent_sm_runs WHERE batch_id = $1 AND run_id = $2 AND set_aside_by = 'resume'`,
        [BATCH, heldId],
      );
      expect(Number(rows[0]!.n)).toBe(1);
      const manifest = await db.client.query<{ manifest: { tasks: { id: string }[] } }>(
        `SELECT manifest FROM "${db.schema}".agent_sm_batches WHERE batch_id = $1`,
        [BATCH],
      );
      expect(manifest.rows[0]!.manifest.tasks.map((t) => t.id)).toEqual(IDS);

      // The built CLI answers from the database, run in an empty folder: no history file anywhere.
      const storeUrl = `${PG_URL}?options=${encodeURIComponent(`-c search_path=${db.schema}`)}`;
      const runs = runBuiltCli(['runs', '--store', storeUrl, '--batch', BATCH, '--json'], { cwd });
      expect({ code: runs.code, stderr: runs.stderr }).toEqual({ code: 0, stderr: '' });
      const rowsOut = JSON.parse(runs.stdout) as Array<{ runId: string; outcome: string; calls: number }>;
      expect(rowsOut.map((r) => `${r.runId}:${r.outcome}`).sort()).toEqual(IDS.map((id) => `${id}:end_of_turn`).sort());
      const inspected = runBuiltCli(['inspect', '--store', storeUrl, BATCH, heldId], { cwd });
      expect({ code: inspected.code, stderr: inspected.stderr }).toEqual({ code: 0, stderr: '' });
      expect(inspected.stdout).toContain(`run ${heldId} of batch ${BATCH}`);
      const page = runBuiltCli(['report', '--store', storeUrl, BATCH, heldId], { cwd });
      expect({ code: page.code, stderr: page.stderr, stdout: page.stdout }).toEqual({
        code: 0,
        stderr: '',
        stdout: `${heldId}.html\n`,
      });
      expect(fs.readFileSync(path.join(cwd, `${heldId}.html`), 'utf8')).toContain(heldId);
      expect(fs.readdirSync(cwd)).toEqual([`${heldId}.html`]);
    } finally {
      await stopAll([...workers.values(), ...producers]);
      redis.disconnect();
      await llm.server.close();
      await store.close();
      await deletePrefix(url, prefix);
      fs.rmSync(cwd, { recursive: true, force: true });
    }
  });
  it("a run whose lost attempt wrote nothing to the store yet held a call in Redis: the takeover's credit is in its report, its records and the store's figures, and Redis counts exactly the report", async () => {
    const prefix = uniquePrefix('pgcredit');
    const store = new PostgresStore(PG_URL, { schema: db.schema });
    const redis = new Redis(url);
    const total = { maxCostUsd: 1, strict: false };
    const tasks = [{ id: 'a', input: 'go', payload: { steps: 2, costUsd: 0.01 } }];
    let running: ReturnType<typeof startBatchWorker> | undefined;
    try {
      // Submitted with no worker running: the test plays the first attempt.
      const batch = await submitBatch(tasks, {
        connection: url,
        name: 'runs',
        prefix,
        store,
        batchId: 'credit',
        total,
        retryLostRuns: 1,
      });
      const keys = batchKeys(prefix, 'runs', 'credit');
      // Attempt 1 began on a worker that died: it reserved a call ($0.05 held) and wrote nothing to the store.
      await redis.hset(keys.started, '0', JSON.stringify({ w: 'dead', a: 1, k: 'its-lock' }));
      expect(
        await new RedisBudget(redis, keys, total, 0, { attempt: 1 }).reserve('llm', { costUsd: 0.05 }),
      ).toBeUndefined();

      running = startBatchWorker({
        connection: url,
        name: 'runs',
        prefix,
        store,
        journal: true,
        onError: false,
        agent: (task) => agentFromPayload(task.payload),
      });
      const report = await batch.report();
      // Attempt 2 wrote attempt 1 off (its call's $0.05 charged as uncertain) and ran the task
      // again from the start, from that spend: $0.02 billed, $0.05 uncertain, with why.
      const [run] = report.runs;
      expect(run).toMatchObject({ id: 'a', outcome: 'end_of_turn', attempt: 2, resumed: 'restarted' });
      expect(run!.usage.costUsd).toBeCloseTo(0.07, 9);
      expect(run!.usage.uncertainUsd).toBeCloseTo(0.05, 9);
      expect(run!.uncertain).toEqual([
        {
          why: "taken over: attempt 1's call held at its worst case, its charge never reached the batch's budget",
          calls: 1,
        },
      ]);
      // Redis counts exactly what the run reports, and holds nothing.
      expect(report.budget.costUsd).toBeCloseTo(report.totals.costUsd, 9);
      expect(report.budget.uncertainUsd).toBeCloseTo(0.05, 9);
      expect(await redis.hget(keys.budget, 'hc')).toBeNull();
      // The store's figures are the report's: its records carry the credit.
      const [row] = await store.listRuns({ batchId: 'credit' });
      expect(row).toMatchObject({ runId: 'a', outcome: 'end_of_turn' });
      expect(row!.costUsd).toBeCloseTo(0.07, 9);
      expect(row!.uncertainUsd).toBeCloseTo(0.05, 9);
    } finally {
      await running?.close();
      redis.disconnect();
      await store.close();
      await deletePrefix(url, prefix);
    }
  });
  it('a run that ended in the store is reported from it, not run again, when its Redis batch is gone and it is submitted again', async () => {
    const prefix = uniquePrefix('pgfinished');
    const store = new PostgresStore(PG_URL, { schema: db.schema });
    let agents = 0;
    const worker = () =>
      startBatchWorker({
        connection: url,
        name: 'runs',
        prefix,
        store,
        journal: true,
        onError: false,
        agent: (task) => {
          agents += 1;
          return agentFromPayload(task.payload);
        },
      });
    const submit = async () =>
      (await submitBatch(tasks, { connection: url, name: 'runs', prefix, store, batchId: 'again' })).report();
    const tasks = [{ id: 'a', input: 'go', payload: { steps: 2, costUsd: 0.01 } }];
    let running = worker();
    try {
      const first = await submit();
      expect(first.runs[0]).toMatchObject({ outcome: 'end_of_turn', usage: { costUsd: 0.02, llmCalls: 2 } });
      expect(agents).toBe(1);
      // Redis loses the batch (its queue too); the store keeps the run.
      await running.close();
      await deletePrefix(url, prefix);
      running = worker();
      const again = await submit();
      expect(agents).toBe(1);
      expect(again.runs[0]).toMatchObject({
        outcome: 'end_of_turn',
        resumed: 'finished',
        usage: { costUsd: 0.02, llmCalls: 2 },
        historyFile: `${store.name} run a of batch again`,
      });
      // Its spend counts in the new batch's budget: the store's, charged once.
      expect(again.budget.costUsd).toBeCloseTo(0.02, 9);
      expect((await store.listRuns({ batchId: 'again' })).map((r) => `${r.runId}:${r.outcome}`)).toEqual([
        'a:end_of_turn',
      ]);
    } finally {
      await running.close();
      await store.close();
      await deletePrefix(url, prefix);
    }
  });
});
