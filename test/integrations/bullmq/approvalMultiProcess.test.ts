// Approvals across processes: a worker in its own process parks the runs that ask, and the
// answers come from a third process (a child that attaches to the batch with `onApproval`),
// through Redis, while the producer only waits for the report.
import type { ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { submitBatch } from '../../../lib/integrations/bullmq/index';
import { deletePrefix, releaseRedis, testRedisUrl, uniquePrefix } from '../../helpers/redis';
import { spawnFixture } from './fixtures/spawnFixture';
import { stopAll } from './fixtures/spawnWorker';

let url: string;
beforeAll(async () => {
  url = await testRedisUrl();
});
afterAll(() => releaseRedis());

describe('startBatchWorker({ approve }) in its own process, answered from another', () => {
  it("a run parked on a worker process goes on with the answers a child process gives: approved calls run there, denied ones do not, and the parked runs held the worker's one slot for none", async () => {
    const prefix = uniquePrefix('approvemp');
    const deletedDir = fs.mkdtempSync(path.join(os.tmpdir(), 'asm-approve-'));
    const children: ChildProcess[] = [];
    try {
      const env = { REDIS_URL: url, QUEUE: 'runs', PREFIX: prefix };
      const worker = spawnFixture('workerProcess.ts', {
        ...env,
        WORKER_ID: 'w1',
        CONCURRENCY: '1',
        APPROVE: 'delete_file',
        DELETED_DIR: deletedDir,
      });
      children.push(worker.child);
      await worker.line('ready');

      const parked = new Set<string>();
      const finished = new Set<string>();
      let bothParked!: () => void;
      const waiting = new Promise<void>((resolve) => (bothParked = resolve));
      const batch = await submitBatch(
        [
          { id: 't0', input: 'clean up', payload: { files: ['a0', 'b0'] } },
          { id: 't1', input: 'clean up', payload: { files: ['b1'] } },
          { id: 't2', input: 'look around', payload: { files: [] } },
        ],
        {
          connection: url,
          name: 'runs',
          prefix,
          batchId: 'approve-mp',
          onProgress: ({ event }) => {
            if (event.type === 'parked') parked.add(event.id);
            if (event.type === 'finished') finished.add(event.run.id);
            if (parked.size === 2 && finished.has('t2')) bothParked();
          },
        },
      );
      // One slot: t0 and t1 park in turn, and t2 runs to its end while both wait, unanswered.
      await waiting;
      expect(finished).toEqual(new Set(['t2']));

      const approver = spawnFixture('approverProcess.ts', { ...env, BATCH_ID: 'approve-mp' });
      children.push(approver.child);
      const report = await batch.report();
      expect(report.runs.map((r) => [r.id, r.outcome, r.worker])).toEqual([
        ['t0', 'end_of_turn', 'w1'],
        ['t1', 'end_of_turn', 'w1'],
        ['t2', 'end_of_turn', 'w1'],
      ]);
      expect(report.runs.map((r) => r.approval && [r.approval.waits, r.approval.calls])).toEqual([
        [1, 2],
        [1, 1],
        undefined,
      ]);
      // The one approved call ran on the worker; the denied ones never did.
      expect(fs.readdirSync(deletedDir)).toEqual(['a0']);
      expect(JSON.parse(await approver.line('report '))).toEqual(['end_of_turn', 'end_of_turn', 'end_of_turn']);
    } finally {
      await stopAll(children);
      await deletePrefix(url, prefix);
      fs.rmSync(deletedDir, { recursive: true, force: true });
    }
  }, 90_000);
});
