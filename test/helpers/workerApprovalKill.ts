// One framework's approval across a worker SIGKILLed while parked, on BullMQ: ten tasks on
// worker processes with `drive` (test/integrations/bullmq/fixtures/frameworkApprovalWorker.ts: the
// AI SDK's `generateText` through `mirrorAISDK`, a LangGraph ReAct agent through a
// LangGraphMirror, or an Agents SDK Agent through an AgentsMirror, each with its real client),
// their records journaled in PostgreSQL. Four call `deploy` (`needsApproval`, or `interrupt()`)
// and park on w1, the only worker then; w1 is SIGKILLed. Two are
// answered with the built `agent-sm approve|deny --redis` while no worker runs, so before any
// takeover; then w2 starts and, as each parked job's lease runs out, takes the lost run over
// (`retryLostRuns: 1`), continuing from its journal: the model's first answer served, not asked
// for again. The two answered go on with their answers, never listed as waiting again; the two
// others come back parked with the same waiting call, and are answered then. No request reaches
// the server twice, the approved deploys run once, the denied ones never, every task is
// reported once.
// The frameworks' tests differ only in the framework and its server.
import type { ChildProcess } from 'node:child_process';
import { Redis } from 'ioredis';
import { batchKeys } from '../../lib/integrations/bullmq/batchKeys';
import { submitBatch } from '../../lib/integrations/bullmq/index';
import { PostgresStore } from '../../lib/integrations/postgres';
import { buildCli, buildLibrary, runCli } from './builtCli';
import { DEPLOYING, IDS, type ApprovalServer } from './approvalBatch';
import { PG_URL, storedRuns, testSchema, type TestSchema } from './postgres';
import { deletePrefix, releaseRedis, testRedisUrl, uniquePrefix } from './redis';
import { spawnFixture } from '../integrations/bullmq/fixtures/spawnFixture';
import { stopAll } from '../integrations/bullmq/fixtures/spawnWorker';

/** Answered while no worker runs (before the takeover), and once the takeover parked the others again. */
const BEFORE = ['t1', 't3'];
const AFTER = ['t5', 't7'];

export interface WorkerApprovalKillCase {
  /** The framework's approval, in the describe block's name. */
  name: string;
  /** frameworkApprovalWorker.ts's FRAMEWORK. */
  framework: 'ai-sdk' | 'langgraph' | 'agents';
  /** A server that answers each task's first request with `ls` (and `deploy` for `DEPLOYING`), then with text. */
  server(): Promise<ApprovalServer>;
  /** `deploy` asks nothing itself: submitBatch's `approve: { deploy: true }`, stored with the batch, makes it wait. */
  policy?: boolean;
}

/** The test of `c`. Call it at a file's top level. */
export function workerApprovalKillTest(c: WorkerApprovalKillCase): void {
  let url: string;
  let db: TestSchema;
  beforeAll(async () => {
    url = await testRedisUrl();
    buildCli();
    buildLibrary({ index: 'lib/index.ts', 'bullmq/index': 'lib/integrations/bullmq/index.ts' });
  }, 120_000);
  beforeEach(async () => {
    db = await testSchema();
  });
  afterEach(() => db.drop());
  afterAll(() => releaseRedis());

  /** The calls `agent-sm approvals --redis … --json` lists: run, call, tool, input, and the answer given and not taken yet. */
  async function waitingCalls(batchId: string) {
    const listed = await runCli(['approvals', '--redis', url, batchId, '--json']);
    expect({ code: listed.code, stderr: listed.stderr }).toEqual({ code: 0, stderr: '' });
    const waiting = JSON.parse(listed.stdout) as {
      calls: Array<{ run: string; callId: string; tool: string; input: unknown; answer?: { approved: boolean } }>;
    };
    return waiting.calls.map(({ run, callId, tool, input, answer }) => ({
      run,
      callId,
      tool,
      input,
      answer: answer === undefined ? 'none' : answer.approved ? 'approved' : 'denied',
    }));
  }

  /** Run `id`'s call of `deploy` as listed, with its answer not taken yet. */
  const deployCall = (id: string, answer = 'none') => ({
    run: id,
    callId: 'c2',
    tool: 'deploy',
    input: { target: `prod-${id}` },
    answer,
  });

  /** Approves the first of `ids` and denies the second, from the built CLI, each exit 0. */
  async function answer(batchId: string, [approved, denied]: string[]): Promise<void> {
    for (const args of [
      ['approve', approved!],
      ['deny', denied!, '--reason', 'not today'],
    ]) {
      const answered = await runCli([args[0]!, '--redis', url, batchId, ...args.slice(1)]);
      expect({ code: answered.code, stderr: answered.stderr }).toEqual({ code: 0, stderr: '' });
      expect(answered.stdout).toContain(`1 call of run ${args[1]}: c2 (deploy)`);
    }
  }

  describe(`${c.name} on startBatchWorker({ drive }), its worker SIGKILLed while runs are parked`, () => {
    jest.setTimeout(120_000);
    it('the lost runs are taken over from their journal: answers given before the takeover are taken, the others wait again on the same call; nothing asked, sent or run twice', async () => {
      const prefix = uniquePrefix(`fwapprovekill-${c.framework}`);
      const batchId = `fw-approve-kill-${c.framework}-${process.pid}`;
      const children: ChildProcess[] = [];
      const redis = new Redis(url);
      const store = new PostgresStore(PG_URL, { schema: db.schema });
      let server: ApprovalServer | undefined;
      try {
        server = await c.server();
        const env = {
          FRAMEWORK: c.framework,
          REDIS_URL: url,
          QUEUE: 'runs',
          PREFIX: prefix,
          BASE_URL: server.baseURL,
          STORE_URL: PG_URL,
          PG_SCHEMA: db.schema,
          // A parked job's lease (and a lock) of 2 s, checked every second: the takeover comes within seconds.
          LOCK_MS: '2000',
          STALL_MS: '1000',
          ASKS: c.policy === true ? 'policy' : 'own',
        };
        const out = new Map<string, string>();
        let errors = '';
        const worker = (id: string) => {
          const w = spawnFixture('frameworkApprovalWorker.ts', { ...env, WORKER_ID: id });
          children.push(w.child);
          out.set(id, '');
          w.child.stdout!.on('data', (d: Buffer) => out.set(id, out.get(id)! + d.toString()));
          w.child.stderr!.on('data', (d: Buffer) => (errors += `${id}: ${d.toString()}`));
          return w;
        };
        const w1 = worker('w1');
        await w1.line('ready');

        const parks = new Map<string, number>();
        const finished: string[] = [];
        const checks = new Set<() => void>();
        /** Resolves once `done()` holds, read at each of the batch's progress events; rejects saying what came after 30 s. */
        const until = (done: () => boolean) =>
          new Promise<void>((resolve, reject) => {
            const timer = setTimeout(() => {
              checks.delete(check);
              const seen = JSON.stringify({ parks: [...parks], finished });
              reject(new Error(`not there after 30 s: ${seen}; the workers said: ${errors}`));
            }, 30_000);
            const check = (): void => {
              if (!done()) return;
              clearTimeout(timer);
              checks.delete(check);
              resolve();
            };
            checks.add(check);
            check();
          });
        const batch = await submitBatch(
          IDS.map((id) => ({ id, input: `task ${id}` })),
          {
            connection: url,
            name: 'runs',
            prefix,
            batchId,
            store,
            retryLostRuns: 1,
            ...(c.policy === true && { approve: { deploy: true } }),
            onProgress: ({ event }) => {
              if (event.type === 'parked') parks.set(event.id, (parks.get(event.id) ?? 0) + 1);
              if (event.type === 'finished') finished.push(event.run.id);
              for (const check of [...checks]) check();
            },
          },
        );
        // Every task parked or ended on w1: the four parked runs are all there.
        await until(() => DEPLOYING.every((id) => parks.get(id) === 1) && finished.length === 6);
        expect([...finished].sort()).toEqual(IDS.filter((id) => !DEPLOYING.includes(id)));
        expect(await waitingCalls(batchId)).toEqual(DEPLOYING.map((id) => deployCall(id)));

        // w1 dies with its four runs parked; their requests stay listed, answerable.
        await stopAll([w1.child]);
        expect(await waitingCalls(batchId)).toEqual(DEPLOYING.map((id) => deployCall(id)));
        // Answered while no worker runs: before any takeover. Listed with their answers, not taken yet.
        await answer(batchId, BEFORE);
        expect(await waitingCalls(batchId)).toEqual([
          deployCall('t1', 'approved'),
          deployCall('t3', 'denied'),
          ...AFTER.map((id) => deployCall(id)),
        ]);

        // w2 takes the lost runs over as their leases run out: the two answered go on and end; the
        // two others park again, waiting on the same call.
        await worker('w2').line('ready');
        await until(() => AFTER.every((id) => parks.get(id) === 2) && BEFORE.every((id) => finished.includes(id)));
        expect(await waitingCalls(batchId)).toEqual(AFTER.map((id) => deployCall(id)));
        // Each came back to AwaitingApproval on w2 (its request made again), the answered ones too, and took the answers waiting there.
        expect(DEPLOYING.map((id) => parks.get(id))).toEqual([2, 2, 2, 2]);
        // The answer given before the takeover was taken, not asked for again: the CLI says so.
        const again = await runCli(['approve', '--redis', url, batchId, 't1', 'c2']);
        expect(again.code).not.toBe(0);
        expect(again.stderr).toContain('approved');
        expect(again.stderr).toContain('gone on');
        await answer(batchId, AFTER);

        const report = await batch.report();
        // Every task reported once, each ended; the four parked runs taken over by w2, recovered from their journal.
        expect(report.runs.map((r) => [r.id, r.outcome])).toEqual(IDS.map((id) => [id, 'end_of_turn']));
        expect(
          report.runs.filter((r) => DEPLOYING.includes(r.id)).map((r) => [r.id, r.worker, r.attempt, r.resumed]),
        ).toEqual(DEPLOYING.map((id) => [id, 'w2', 2, 'recovered']));
        // The approved deploys ran once, on w2; the denied ones never did (w1 ran none).
        const deploys = (id: string) =>
          out
            .get(id)!
            .split('\n')
            .filter((l) => l.startsWith('ran deploy'))
            .sort();
        expect({ w1: deploys('w1'), w2: deploys('w2') }).toEqual({ w1: [], w2: ['ran deploy t1', 'ran deploy t5'] });
        // No request twice: each task's two calls, the taken-over runs' first served from their journal.
        const bodies = server.exchanges.map((e) => JSON.stringify(e.body));
        expect(new Set(bodies).size).toBe(bodies.length);
        expect(bodies).toHaveLength(20);
        expect(server.rejected).toEqual([]);
        const lastSaid = (id: string): string =>
          JSON.stringify(server!.exchanges.filter((e) => JSON.stringify(e.body).includes(`task ${id}`)).at(-1)!.body);
        for (const id of ['t3', 't7']) expect(lastSaid(id)).toContain('not today');
        for (const id of ['t1', 't5']) expect(lastSaid(id)).toContain(`deployed to prod-${id}`);
        // The same run went on in the store: parked in AwaitingApproval, then running its tool.
        const stored = await storedRuns(store, batchId, DEPLOYING);
        for (const id of DEPLOYING) {
          const lines = stored.get(id)!;
          expect(lines).toContain('"to":"AwaitingApproval"');
          expect(lines).toContain('"from":"AwaitingApproval","to":"RunningTool"');
          if (id === 't3' || id === 't7') expect(lines).toContain('denied: not today');
        }
        // Every request closed: nothing left to answer.
        expect(await redis.hlen(batchKeys(prefix, 'runs', batchId).approvals)).toBe(0);
      } finally {
        redis.disconnect();
        await stopAll(children);
        await server?.close();
        await store.close();
        await deletePrefix(url, prefix);
      }
    });
  });
}
