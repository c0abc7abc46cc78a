// One framework's approvals on the BullMQ worker, answered from the terminal: a batch of ten
// tasks run by two worker processes with `drive` (test/integrations/bullmq/fixtures/
// frameworkApprovalWorker.ts: the framework's task of test/fixtures/deploy/ with its real client
// against the local server), one slot each. Four tasks call `deploy`, whose approval (the
// framework's own) parks the run: its request goes to Redis and it lets go of its slot and its job
// (with one slot per worker, the six others end only so). The built `agent-sm approvals|approve|deny
// --redis URL <batchId>`, run in other processes, lists the four calls, approves two and denies
// two; each parked run goes on as the same run (its history file, its report): the server sees no
// request twice, every task is reported once, the denials reach the model and the approved
// deploys run once. The frameworks' tests differ only in the framework, the server and where a
// request carries its conversation.
import type { ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Redis } from 'ioredis';
import { batchKeys } from '../../lib/integrations/bullmq/batchKeys';
import { submitBatch } from '../../lib/integrations/bullmq/index';
import { spawnFixture } from '../integrations/bullmq/fixtures/spawnFixture';
import { stopAll } from '../integrations/bullmq/fixtures/spawnWorker';
import { DEPLOYING, IDS, type ApprovalServer } from './approvalBatch';
import { buildCli, buildLibrary, runCli } from './builtCli';
import { deletePrefix, releaseRedis, testRedisUrl, uniquePrefix } from './redis';

export interface WorkerApprovalCase {
  /** The describe block's name. */
  name: string;
  /** frameworkApprovalWorker.ts's FRAMEWORK. */
  framework: 'ai-sdk' | 'langgraph' | 'agents' | 'observe';
  /** A server that answers each task's first request with `ls` (and `deploy` for `DEPLOYING`), then with text. */
  server(): Promise<ApprovalServer>;
  /** The part of a request's body that carries the conversation (`messages`, `input`). */
  conversation(body: unknown): unknown;
  /** `deploy` asks nothing itself: submitBatch's `approve: { deploy: true }`, stored with the batch, makes it wait on every worker. */
  policy?: boolean;
}

/** The test of `c`. Call it at a file's top level. */
export function workerApprovalCliTest(c: WorkerApprovalCase): void {
  let url: string;
  beforeAll(async () => {
    url = await testRedisUrl();
    buildCli();
    buildLibrary({ index: 'lib/index.ts', 'bullmq/index': 'lib/integrations/bullmq/index.ts' });
  }, 120_000);
  afterAll(() => releaseRedis());

  describe(c.name, () => {
    it('four runs park holding no slot, are listed, two approved and two denied from the terminal go on as the same runs; no request twice, every task once', async () => {
      const prefix = uniquePrefix(`fwapprove-${c.framework}`);
      const batchId = `fw-approve-${c.framework}-${process.pid}`;
      const historyDir = fs.mkdtempSync(path.join(os.tmpdir(), 'asm-fw-approve-'));
      const children: ChildProcess[] = [];
      const redis = new Redis(url);
      let server: ApprovalServer | undefined;
      try {
        server = await c.server();
        const env = {
          FRAMEWORK: c.framework,
          REDIS_URL: url,
          QUEUE: 'runs',
          PREFIX: prefix,
          BASE_URL: server.baseURL,
          HISTORY_DIR: historyDir,
          ASKS: c.policy === true ? 'policy' : 'own',
        };
        let workerOut = '';
        const workers = ['w1', 'w2'].map((id) => spawnFixture('frameworkApprovalWorker.ts', { ...env, WORKER_ID: id }));
        for (const w of workers) {
          children.push(w.child);
          w.child.stdout!.on('data', (d: Buffer) => (workerOut += d.toString()));
        }
        await Promise.all(workers.map((w) => w.line('ready')));

        const parked: string[] = [];
        const finished: string[] = [];
        let settled!: () => void;
        const allSettled = new Promise<void>((resolve) => (settled = resolve));
        const batch = await submitBatch(
          IDS.map((id) => ({ id, input: `task ${id}` })),
          {
            connection: url,
            name: 'runs',
            prefix,
            batchId,
            ...(c.policy === true && { approve: { deploy: true } }),
            onProgress: ({ event }) => {
              if (event.type === 'parked') parked.push(event.id);
              if (event.type === 'finished') finished.push(event.run.id);
              if (parked.length + finished.length === IDS.length) settled();
            },
          },
        );
        // Each run parked or ended (one refused its approval would end in Error). One slot per
        // worker: the six others end only if the four parked runs let go of theirs.
        await allSettled;
        expect([...parked].sort()).toEqual(DEPLOYING);
        expect([...finished].sort()).toEqual(IDS.filter((id) => !DEPLOYING.includes(id)));

        const listed = await runCli(['approvals', '--redis', url, batchId, '--json']);
        expect({ code: listed.code, stderr: listed.stderr }).toEqual({ code: 0, stderr: '' });
        const waiting = JSON.parse(listed.stdout) as {
          running: boolean;
          calls: Array<{ run: string; callId: string; tool: string; input: unknown }>;
        };
        expect(waiting.running).toBe(true);
        expect(waiting.calls.map(({ run, callId, tool, input }) => ({ run, callId, tool, input }))).toEqual(
          DEPLOYING.map((id) => ({ run: id, callId: 'c2', tool: 'deploy', input: { target: `prod-${id}` } })),
        );

        for (const [verb, run, ...rest] of [
          ['approve', 't1', 'c2'],
          ['deny', 't3', 'c2', '--reason', 'not today'],
          ['approve', 't5', '--by', 'alice'],
          ['deny', 't7', '--reason', 'not today'],
        ]) {
          const answered = await runCli([verb!, '--redis', url, batchId, run!, ...rest]);
          expect({ code: answered.code, stderr: answered.stderr }).toEqual({ code: 0, stderr: '' });
          expect(answered.stdout).toContain(`1 call of run ${run}: c2 (deploy)`);
        }

        const report = await batch.report();
        // Every task reported once, each ended; the parked ones waited once, for one call.
        expect(report.runs.map((r) => [r.id, r.outcome])).toEqual(IDS.map((id) => [id, 'end_of_turn']));
        expect(
          report.runs.filter((r) => r.approval !== undefined).map((r) => [r.id, r.approval!.waits, r.approval!.calls]),
        ).toEqual(DEPLOYING.map((id) => [id, 1, 1]));
        // The approved deploys ran once, on their run's worker; the denied ones never did.
        expect(
          workerOut
            .split('\n')
            .filter((l) => l.startsWith('ran deploy'))
            .sort(),
        ).toEqual(['ran deploy t1', 'ran deploy t5']);
        // No request twice: each task's two calls, the second after its answers.
        const bodies = server.exchanges.map((e) => JSON.stringify(e.body));
        expect(new Set(bodies).size).toBe(bodies.length);
        expect(bodies).toHaveLength(20);
        expect(server.rejected).toEqual([]);
        const lastSaid = (id: string): string =>
          JSON.stringify(
            c.conversation(server!.exchanges.filter((e) => JSON.stringify(e.body).includes(`task ${id}`)).at(-1)!.body),
          );
        for (const id of ['t3', 't7']) expect(lastSaid(id)).toContain('not today');
        for (const id of ['t1', 't5']) expect(lastSaid(id)).toContain(`deployed to prod-${id}`);
        // The same run went on: one history file, parked in AwaitingApproval and running its tool after it.
        for (const id of DEPLOYING) {
          const run = report.runs.find((r) => r.id === id)!;
          const file = path.join(historyDir, batchId, `${IDS.indexOf(id)}-${id}.jsonl`);
          expect(run.historyFile).toBe(file);
          const lines = fs.readFileSync(file, 'utf8');
          expect(lines).toContain('"to":"AwaitingApproval"');
          expect(lines).toContain('"from":"AwaitingApproval","to":"RunningTool"');
          if (id === 't3' || id === 't7') expect(lines).toContain('denied: not today');
        }
        // Every request closed: nothing left to answer.
        expect(await redis.hlen(batchKeys(prefix, 'runs', batchId).approvals)).toBe(0);
        const after = await runCli(['approvals', '--redis', url, batchId]);
        expect(after.stdout).toContain(`agent-sm: no run of batch ${batchId}`);
      } finally {
        redis.disconnect();
        await stopAll(children);
        await server?.close();
        await deletePrefix(url, prefix);
        fs.rmSync(historyDir, { recursive: true, force: true });
      }
    }, 120_000);
  });
}
