// A framework run on BullMQ, its worker SIGKILLed mid-run: a worker with `drive` drives
// `generateText` through `mirrorAISDK` (the real @ai-sdk/openai client) against the local billing
// server, its records journaled in PostgreSQL. The run's first call is answered and journaled;
// then the worker is killed at one of three cuts: its second call held open at the server
// (`call`: it may have been paid), its tool running (`tool`: no call in flight), or its second
// call let through in Redis but its reserve line not yet committed (`reserve`: the request
// provably never left). Another worker takes the lost run (`retryLostRuns: 1`) and continues it
// from its journal: the answered call is served, not sent again; the record holds the whole run
// and counts what both attempts spent; the batch's budget in Redis charges every call hold the
// killed worker left at its worst case — the takeover cannot tell a dead worker from one whose lock
// lapsed while it lives on (zombieTakeover.test.ts), whose call may still leave — and keeps no
// hold of the killed worker's. Adapter runs: postgresWorkers.test.ts.
import { Client } from 'pg';
import type { ChildProcess } from 'node:child_process';
import { Redis } from 'ioredis';
import { loadHistory, validateHistory } from '../../../lib/subpaths/history';
import { batchKeys } from '../../../lib/integrations/bullmq/batchKeys';
import { submitBatch, type PriceTable } from '../../../lib/integrations/bullmq/index';
import { PostgresStore } from '../../../lib/integrations/postgres';
import { billingServer } from '../../helpers/killableBatch';
import { USD_PER_TOKEN } from '../../helpers/localPricing';
import { PG_URL, testSchema, type TestSchema } from '../../helpers/postgres';
import { deletePrefix, releaseRedis, testRedisUrl, uniquePrefix } from '../../helpers/redis';
import { monitorRedis } from '../../helpers/redisMonitor';
import { spawnFixture } from './fixtures/spawnFixture';
import { stopAll } from './fixtures/spawnWorker';

jest.setTimeout(60_000);

const BATCH = 'fw-crash';
/**
 * The batch's strict dollar cap: room for the run's calls (its first answer, the killed worker's
 * call hold charged at its worst case, and the resumed call's hold), and not for a hold the killed
 * worker left in Redis beside them: it would refuse the resumed run's last call. Each call holds
 * its input as estimated and MAX_TOKENS out, about $0.013–0.015 here.
 */
const CAPS = { call: 0.035, tool: 0.035, reserve: 0.035 };
type Cut = keyof typeof CAPS;
const MAX_TOKENS = 2000;
/** $5 per million tokens, in or out: the server's answers are 100 tokens in, 10 out. */
const PRICES: PriceTable = { 'gpt-local': { inputPerMTok: 5, outputPerMTok: 5 } };
const ANSWER_USD = 110 * USD_PER_TOKEN;

let url: string;
let db: TestSchema;
beforeAll(async () => {
  url = await testRedisUrl();
});
beforeEach(async () => {
  db = await testSchema();
});
afterEach(() => db.drop());
afterAll(() => releaseRedis());

/**
 * `heard` resolves once a journal line of an LLM response that holds `mark` is committed to the store:
 * a trigger on its table of lines notifies, the test's client listens. Set up before any run
 * starts, so no line goes unheard.
 */
/** `url` with the connections' application name set to `name` (for pg_stat_activity). */
function withAppName(url: string, name: string): string {
  return `${url}${url.includes('?') ? '&' : '?'}application_name=${encodeURIComponent(name)}`;
}

async function committed(schema: TestSchema, mark: string): Promise<{ heard: Promise<void> }> {
  const s = `"${schema.schema}"`;
  await schema.client.query(
    `CREATE FUNCTION ${s}.told() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN PERFORM pg_notify('${schema.schema}', NEW.line); RETURN NEW; END $$`,
  );
  await schema.client.query(
    `CREATE TRIGGER told AFTER INSERT ON ${s}.agent_sm_run_lines FOR EACH ROW EXECUTE FUNCTION ${s}.told()`,
  );
  const heard = new Promise<void>((resolve) =>
    schema.client.on('notification', (n) => {
      if (n.channel === schema.schema && n.payload?.includes(mark) && n.payload.includes('"finishReason"')) resolve();
    }),
  );
  await schema.client.query(`LISTEN ${s}`);
  return { heard };
}

/**
 * Kills `worker` once its run's next LLM call is let through in Redis and before that call's
 * reserve line is committed: the store's table of lines is locked, the worker's tool let go
 * (`go`), and Redis's MONITOR tells when the call's step reaches it. The worker's connections to
 * the store (`appName`) are ended before the lock goes, so that no line it sent is committed after.
 */
async function killBeforeReserveLine(
  schema: TestSchema,
  worker: ChildProcess,
  appName: string,
  runUsageKey: string,
): Promise<void> {
  const locker = new Client({ connectionString: PG_URL });
  await locker.connect();
  // The monitor only times the kill; if it missed the key, `stepped` would never settle and the
  // test would time out.
  let stepped!: () => void;
  const steppedAt = new Promise<void>((resolve) => (stepped = resolve));
  const monitor = await monitorRedis(url, (args) => {
    if (args.includes(runUsageKey)) stepped();
  });
  try {
    await locker.query('BEGIN');
    await locker.query(`LOCK TABLE "${schema.schema}".agent_sm_run_lines IN EXCLUSIVE MODE`);
    worker.stdin!.write('go\n');
    await steppedAt;
    await stopAll([worker]);
    await locker.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1', [appName]);
    await locker.query('ROLLBACK');
  } finally {
    monitor.stop();
    await locker.end();
  }
}

async function* once(chunk: Uint8Array): AsyncGenerator<Uint8Array> {
  yield chunk;
}

/**
 * One task on worker w1, killed (SIGKILL) at `cut`: its second call held open at the server, or
 * its tool running; then w2 takes the lost run. Resolves to what the server answered, the report,
 * Redis's budget after, and the run's records in the store.
 */
async function killedMidRun(cut: Cut) {
  const prefix = uniquePrefix('fwcrash');
  // Held: the first request carrying a tool result (the run's second call), past one answered.
  const llm = await billingServer(cut === 'call' ? 1 : Infinity, { holdOne: true });
  const store = new PostgresStore(PG_URL, { schema: db.schema });
  const redis = new Redis(url);
  const children: ChildProcess[] = [];
  const appName = `${db.schema}-w1`;
  try {
    const workerEnv = {
      REDIS_URL: url,
      QUEUE: 'runs',
      PREFIX: prefix,
      LOCK_MS: '4000',
      STALL_MS: '1000',
      STORE_URL: withAppName(PG_URL, appName),
      PG_SCHEMA: db.schema,
      BASE_URL: llm.server.baseURL,
      MAX_TOKENS: String(MAX_TOKENS),
    };
    const batch = await submitBatch([{ id: 'task-0', input: 'task 0' }], {
      connection: url,
      name: 'runs',
      prefix,
      batchId: BATCH,
      store,
      pricing: PRICES,
      total: { maxCostUsd: CAPS[cut] },
      retryLostRuns: 1,
    });
    // The kill comes once the first answer is committed to the store, and w1 is at its cut.
    const journaled = await committed(db, 'call_1_x');
    const w1 = spawnFixture('frameworkWorkerProcess.ts', {
      ...workerEnv,
      WORKER_ID: 'w1',
      ...(cut === 'call' ? {} : { TOOL: cut === 'tool' ? 'hang' : 'gate' }),
    });
    children.push(w1.child);
    await journaled.heard;
    if (cut === 'call') await llm.heldRequest;
    else await w1.line('tool task-0');
    if (cut === 'reserve')
      await killBeforeReserveLine(db, w1.child, appName, batchKeys(prefix, 'runs', BATCH).runUsage);
    const cutOff = await store.listRuns({ batchId: BATCH });
    await stopAll([w1.child]);
    llm.resume();
    const w2 = spawnFixture('frameworkWorkerProcess.ts', { ...workerEnv, WORKER_ID: 'w2' });
    children.push(w2.child);
    await w2.line('ready');
    const report = await batch.report();
    const keys = batchKeys(prefix, 'runs', report.batchId);
    const budget = await redis.hgetall(keys.budget);
    const runUsage = await redis.hgetall(keys.runUsage);
    const chunks: Uint8Array[] = [];
    for await (const chunk of store.readRun(BATCH, 'task-0')) chunks.push(chunk);
    const history = await loadHistory('task-0', { input: once(Buffer.concat(chunks)) });
    return { answered: llm.answered, cutOff, report, budget, runUsage, history, storeName: store.name };
  } finally {
    await stopAll(children);
    redis.disconnect();
    await llm.server.close();
    await store.close();
    await deletePrefix(url, prefix);
  }
}

describe('a framework run (mirrorAISDK) on BullMQ, its worker SIGKILLed mid-run', () => {
  it.each([
    ['call', 'its second call held open at the model (it may have been paid)'],
    ['tool', 'its tool running (no call in flight)'],
    ['reserve', 'its second call let through in Redis, its reserve line not committed (it never left)'],
  ] as const)(
    'cut off at %s, %s: another worker continues it from its journal, nothing paid twice, the batch charged what may have been spent',
    async (cut: Cut, _how: string) => {
      const { answered, cutOff, report, budget, runUsage, history, storeName } = await killedMidRun(cut);
      // Cut off: the run was in the store, incomplete, when its worker died.
      expect(cutOff.map((r) => `${r.runId}:${r.outcome}`)).toEqual(['task-0:incomplete']);
      const [run] = report.runs;
      expect(run).toMatchObject({
        id: 'task-0',
        outcome: 'end_of_turn',
        worker: 'w2',
        attempt: 2,
        resumed: 'recovered',
      });
      // The model was asked each call once: the first by w1, the second (cut off or never sent) by w2.
      expect(answered.map((a) => [a.phase, a.mark])).toEqual([
        [1, 'call_1_x'],
        [2, 'answer-2-x'],
      ]);
      // The held call may have been paid: charged at its hold (its bound of output tokens, and
      // its input), once. The tool cut off had no call in flight, and the call cut before its
      // reserve line never left — yet the takeover cannot tell a dead worker from one that lives
      // on: it charges the killed worker's call hold (an answer whose charge it had not sent, a
      // call let through) at its worst case, as uncertain — the run's credit. The run counts the
      // calls answered; Redis, the calls it let through (a cut-off one too, sent or not).
      const usd = run!.usage.costUsd;
      expect(run!.usage.llmCalls).toBe(2);
      if (cut === 'call') expect(usd).toBeGreaterThanOrEqual(2 * ANSWER_USD + MAX_TOKENS * USD_PER_TOKEN - 1e-12);
      expect(budget['l']).toBe(cut === 'tool' ? '2' : '3');
      // The run reports what Redis counts for it, both attempts, the credit as uncertain with
      // why; the batch's budget is the run's: billed + uncertain, and the uncertain part apart.
      // Every hold the killed worker left there went as it was charged: none is left.
      expect(report.budget.costUsd).toBeCloseTo(Number(budget['c']), 12);
      expect(usd).toBeCloseTo(Number(budget['c']), 12);
      expect(run!.usage.uncertainUsd).toBeCloseTo(Number(budget['cu']), 12);
      expect(Number(runUsage['0:zc'])).toBeGreaterThanOrEqual(MAX_TOKENS * USD_PER_TOKEN);
      expect(run!.uncertain).toEqual([
        {
          why: "taken over: attempt 1's call held at its worst case, its charge never reached the batch's budget",
          calls: 1,
        },
      ]);
      if (cut !== 'call') {
        const atHold = Number(budget['cu']);
        expect(atHold).toBeGreaterThanOrEqual(MAX_TOKENS * USD_PER_TOKEN);
        // Billed: the answers whose charges reached Redis (the tool cut's first answer is counted at its hold).
        expect(usd - atHold).toBeCloseTo(cut === 'tool' ? ANSWER_USD : 2 * ANSWER_USD, 12);
      }
      expect(report.budget.costUsd).toBeLessThanOrEqual(CAPS[cut]);
      expect({ held: budget['hc'], run: Object.keys(runUsage).filter((k) => /:h[cw]$/.test(k)) }).toEqual({
        held: undefined,
        run: [],
      });
      // The resumed record holds the whole run: both answers journaled, its moves valid, its end the model's answer.
      expect(validateHistory(history.entries)).toMatchObject({ ok: true });
      expect(history.records).toHaveLength(run!.transitions);
      const text = JSON.stringify(history.journal);
      expect(text).toContain('call_1_x');
      expect(text).toContain('answer-2-x');
      expect(history.records.at(-1)!.to).toBe('EndOfTurn');
      expect(run!.historyFile).toBe(`${storeName} run task-0 of batch ${BATCH}`);
      // The tool: its result served from the journal; cut off before its result was committed,
      // answered as interrupted (it may have had effects), not run again.
      const tool = history.journal.find((line) => line.type === 'tool');
      expect(tool).toMatchObject(cut === 'call' ? { status: 'ok', fromJournal: true } : { status: 'interrupted' });
    },
  );
});
