// `agent-sm approvals|approve|deny --redis URL <batchId>` as the built executable, on a BullMQ
// batch of ten tasks run by two worker processes, four of which park for approval of
// `delete_file` (one with two calls): answered from the terminal, two approved and two denied,
// through the Redis records `onApproval` uses. Each answer is taken once by the run's worker and
// the parked run goes on; a second answer, an unknown batch, run or call, a run that does not
// wait: refused by name (exit 2).
import type { ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Redis } from 'ioredis';
import { batchKeys } from '../../../lib/integrations/bullmq/batchKeys';
import { submitBatch } from '../../../lib/integrations/bullmq/index';
import { buildCli, buildLibrary, runBuiltCli, runCli } from '../../helpers/builtCli';
import { deletePrefix, releaseRedis, testRedisUrl, uniquePrefix } from '../../helpers/redis';
import { spawnFixture } from './fixtures/spawnFixture';
import { stopAll } from './fixtures/spawnWorker';

let url: string;
beforeAll(async () => {
  url = await testRedisUrl();
  buildCli();
  buildLibrary({ index: 'lib/index.ts', 'bullmq/index': 'lib/integrations/bullmq/index.ts' });
}, 120_000);
afterAll(() => releaseRedis());

/** The files each task's LLM asks to delete: four tasks ask (t5 twice), six do not. */
const FILES: Record<string, string[]> = { t1: ['a1'], t3: ['b3'], t5: ['a5', 'b5'], t7: ['b7'] };
const PARKING = Object.keys(FILES);

interface Listed {
  redis: string;
  batchId: string;
  queue: string;
  running: boolean;
  calls: Array<{
    run: string;
    callId: string;
    tool: string;
    input: unknown;
    waitedMs: number;
    answer?: { approved: boolean; by?: string; taken: boolean };
  }>;
}

/** A URL as the CLI shows it: without its password. */
function shownUrl(address: string): string {
  const parsed = new URL(address);
  parsed.password = '';
  return parsed.toString();
}

describe('agent-sm approvals | approve | deny --redis URL <batchId> (built executable) on a BullMQ batch', () => {
  it('lists the calls parked on two worker processes; answers given from the terminal are taken once, and the parked runs go on', async () => {
    const prefix = uniquePrefix('approvecli');
    const batchId = `approve-cli-${process.pid}`;
    const deletedDir = fs.mkdtempSync(path.join(os.tmpdir(), 'asm-approve-cli-'));
    const children: ChildProcess[] = [];
    const redis = new Redis(url);
    // Run without blocking this process: its producer reads Redis all along, bounded in time.
    const cli = runCli;
    try {
      const env = { REDIS_URL: url, QUEUE: 'runs', PREFIX: prefix, APPROVE: 'delete_file', DELETED_DIR: deletedDir };
      const workers = ['w1', 'w2'].map((id) =>
        spawnFixture('workerProcess.ts', { ...env, WORKER_ID: id, CONCURRENCY: '1' }),
      );
      children.push(...workers.map((w) => w.child));
      await Promise.all(workers.map((w) => w.line('ready')));

      const parked = new Set<string>();
      const finished: string[] = [];
      let allParked!: () => void;
      const waiting = new Promise<void>((resolve) => (allParked = resolve));
      const batch = await submitBatch(
        Array.from({ length: 10 }, (_, i) => ({
          id: `t${i}`,
          input: 'clean up',
          payload: { files: FILES[`t${i}`] ?? [] },
        })),
        {
          connection: url,
          name: 'runs',
          prefix,
          batchId,
          onProgress: ({ event }) => {
            if (event.type === 'parked') parked.add(event.id);
            if (event.type === 'finished') finished.push(event.run.id);
            if (parked.size === 4 && finished.length === 6) allParked();
          },
        },
      );
      await waiting;
      expect([...parked].sort()).toEqual(PARKING);

      // What waits: the five calls, with their tools and inputs, the batch running.
      const listed = await cli(['approvals', '--redis', url, batchId, '--json']);
      expect({ code: listed.code, stderr: listed.stderr }).toEqual({ code: 0, stderr: '' });
      const waitingCalls = JSON.parse(listed.stdout) as Listed;
      expect(waitingCalls).toMatchObject({ batchId, queue: 'runs', running: true });
      expect(waitingCalls.calls.map(({ run, callId, tool, input }) => ({ run, callId, tool, input }))).toEqual(
        PARKING.flatMap((run) =>
          FILES[run]!.map((file, i) => ({ run, callId: `d${i}`, tool: 'delete_file', input: { path: file } })),
        ),
      );
      for (const call of waitingCalls.calls) expect(call.waitedMs).toBeGreaterThanOrEqual(0);
      const text = await cli(['approvals', '--redis', url, batchId]);
      expect(text.stdout).toContain(`5 tool calls wait for approval in batch ${batchId} (Redis at `);
      expect(text.stdout).toMatch(/^ {2}t3 {2}d0 {2}delete_file \{"path":"b3"\} {2}waiting /m);

      // Refused by name while the runs wait: an unknown call, an unknown run, an unknown batch.
      const unknownCall = await cli(['approve', '--redis', url, batchId, 't3', 'zz']);
      expect({ code: unknownCall.code, stdout: unknownCall.stdout }).toEqual({ code: 2, stdout: '' });
      expect(unknownCall.stderr).toBe(
        'agent-sm: error: Expected `callId` to be the id of a call run t3 waits on (d0), got `zz` (string)\n',
      );
      const unknownRun = await cli(['deny', '--redis', url, batchId, 'nope']);
      expect(unknownRun.code).toBe(2);
      expect(unknownRun.stderr).toBe(
        `agent-sm: error: Expected \`run\` to be the id of a run of batch ${batchId} (t0, t1, t2, t3, t4, t5, t6, t7, t8, t9), got \`nope\` (string)\n`,
      );
      const unknownBatch = await cli(['approvals', '--redis', url, `nobatch-${process.pid}`]);
      expect(unknownBatch.code).toBe(2);
      expect(unknownBatch.stderr).toContain(`agent-sm: error: no batch nobatch-${process.pid} in Redis at `);
      const notWaiting = await cli(['approve', '--redis', url, batchId, 't0']);
      expect(notWaiting.code).toBe(2);
      expect(notWaiting.stderr).toContain(
        `run t0 of batch ${batchId} does not wait for approval (no request of it is open`,
      );

      // One of t5's two calls: taken by nobody yet (its run waits for the other), and a second answer to it refused.
      const first = await cli(['approve', '--redis', url, batchId, 't5', 'd0', '--by', 'alice']);
      expect({ code: first.code, stderr: first.stderr }).toEqual({ code: 0, stderr: '' });
      expect(first.stdout).toBe(
        'agent-sm: approved 1 call of run t5: d0 (delete_file); the run goes on once every call of it has an answer (see agent-sm approvals)\n',
      );
      const again = await cli(['deny', '--redis', url, batchId, 't5', 'd0']);
      expect({ code: again.code, stdout: again.stdout }).toEqual({ code: 2, stdout: '' });
      expect(again.stderr).toMatch(
        /^agent-sm: error: call d0 of run t5 was answered already \(approved by alice at \d{4}-\d\d-\d\dT[\d:.]+Z\): an answer is taken once/,
      );
      const shown = await cli(['approvals', '--redis', url, batchId]);
      expect(shown.stdout).toMatch(/^ {2}t5 {2}d0 {2}delete_file .* — approved by alice, not taken yet$/m);
      const shownJson = JSON.parse((await cli(['approvals', '--redis', url, batchId, '--json'])).stdout) as Listed;
      expect(shownJson.calls.find((c) => c.run === 't5' && c.callId === 'd0')?.answer).toMatchObject({
        approved: true,
        by: 'alice',
        taken: false,
      });

      // The rest: t5's other call denied, t1 approved, t3 and t7 denied (by the login name).
      for (const [args, said] of [
        [
          ['deny', 't5', '--reason', 'not b'],
          'denied 1 call of run t5: d1 (delete_file); every call of the run has its answer',
        ],
        [['approve', 't1'], 'approved 1 call of run t1: d0 (delete_file); every call of the run has its answer'],
        [['deny', 't3', 'd0', '--reason', 'not b'], 'denied 1 call of run t3: d0 (delete_file)'],
        [['deny', 't7', '--reason', 'not b'], 'denied 1 call of run t7: d0 (delete_file)'],
      ] as const) {
        const [verb, ...rest] = args;
        const answered = await cli([verb, '--redis', url, batchId, ...rest]);
        expect({ code: answered.code, stderr: answered.stderr }).toEqual({ code: 0, stderr: '' });
        expect(answered.stdout).toContain(said);
      }

      const report = await batch.report();
      // Every task reported once, each parked run gone on to its end with its answers.
      expect(report.runs.map((r) => [r.id, r.outcome])).toEqual(
        Array.from({ length: 10 }, (_, i) => [`t${i}`, 'end_of_turn']),
      );
      expect(
        report.runs.filter((r) => r.approval !== undefined).map((r) => [r.id, r.approval!.waits, r.approval!.calls]),
      ).toEqual([
        ['t1', 1, 1],
        ['t3', 1, 1],
        ['t5', 1, 2],
        ['t7', 1, 1],
      ]);
      // The approved calls ran, on their run's worker; the denied ones never did.
      expect(fs.readdirSync(deletedDir).sort()).toEqual(['a1', 'a5']);
      expect(fs.readFileSync(path.join(deletedDir, 'a5'), 'utf8')).toBe('t5');
      // Every request closed: nothing left to answer, and a late answer is refused saying how the call was answered.
      expect(await redis.hlen(batchKeys(prefix, 'runs', batchId).approvals)).toBe(0);
      const late = await cli(['approve', '--redis', url, batchId, 't1', 'd0']);
      expect(late.code).toBe(2);
      expect(late.stderr).toMatch(
        /^agent-sm: error: call d0 of run t1 was answered already \((approved|denied) by .+ at [\d-]+T[\d:.]+Z\): the run has gone on with it; nothing waits for another answer\n$/,
      );
      expect((await cli(['approvals', '--redis', url, batchId])).stdout).toBe(
        `agent-sm: no run of batch ${batchId} (Redis at ${shownUrl(url)}) waits for approval\n`,
      );
    } finally {
      redis.disconnect();
      await stopAll(children);
      await deletePrefix(url, prefix);
      fs.rmSync(deletedDir, { recursive: true, force: true });
    }
  }, 120_000);

  it('says the three places and --by in its help', () => {
    for (const verb of ['approvals', 'approve', 'deny']) {
      const help = runBuiltCli([verb, '--help']);
      expect(help.code).toBe(0);
      for (const option of ['--redis <url>', '--store <url>', '--queue <name>', '--prefix <prefix>'])
        expect(help.stdout).toContain(option);
      if (verb !== 'approvals') expect(help.stdout).toContain('--by <name>');
    }
  });

  it('names what is wrong before it reaches Redis: --queue without --redis, --redis with --store', () => {
    const queueAlone = runBuiltCli(['approvals', 'somewhere', '--queue', 'runs']);
    expect(queueAlone.code).toBe(2);
    expect(queueAlone.stderr).toBe('agent-sm: error: --queue is for a BullMQ batch: give --redis URL with it\n');
    const both = runBuiltCli(['approve', '--redis', url, '--store', 'postgres://x@127.0.0.1/db', 'b', 't1']);
    expect(both.code).toBe(2);
    expect(both.stderr).toBe('agent-sm: error: give --redis (a BullMQ batch) or --store (a store batch), not both\n');
  });
});
