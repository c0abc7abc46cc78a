// A BullMQ batch's approval policy is the batch's: `submitBatch({ approve })` stores it in
// Redis, and every worker of the queue runs the batch's tasks under it — one with no policy of
// its own, one with the same (two worker processes answered from the CLI: left for later). A worker whose own `approve` or `approvalTimeoutMs` says
// otherwise ends the run in Error, naming the option. Real Redis, workers in this process.
import {
  startBatchWorker,
  submitBatch,
  type BatchWorkerHandle,
  type DistributedTask,
} from '../../../lib/integrations/bullmq/index';
import { deletePrefix, releaseRedis, testRedisUrl, uniquePrefix } from '../../helpers/redis';
import { deletingAgent, isDeletingPayload } from './fixtures/deletingAgent';

let url: string;
beforeAll(async () => {
  url = await testRedisUrl();
});
afterAll(() => releaseRedis());

const task = (id: string, files: string[]): DistributedTask => ({ id, input: `clean up ${id}`, payload: { files } });

function setup(label: string) {
  const prefix = uniquePrefix(label);
  const workers: BatchWorkerHandle[] = [];
  const deleted: string[] = [];
  return {
    prefix,
    deleted,
    worker(options: Partial<Parameters<typeof startBatchWorker>[0]> = {}) {
      const w = startBatchWorker({
        connection: url,
        name: 'runs',
        prefix,
        agent: (t) => {
          if (!isDeletingPayload(t.payload)) throw new Error(`task ${t.id} has no files`);
          return deletingAgent(t.payload, (path) => deleted.push(path));
        },
        onError: false,
        closeTimeoutMs: 1000,
        ...options,
      });
      workers.push(w);
      return w;
    },
    async cleanup() {
      await Promise.all(workers.map((w) => w.close()));
      await deletePrefix(url, prefix);
    },
  };
}

const TASKS = [task('t0', ['a0']), task('t1', ['a1', 'b1']), task('t2', []), task('t3', ['a3']), task('t4', ['a4'])];

describe("submitBatch({ approve }): the approval policy is the batch's", () => {
  it('a worker with no policy of its own, and one with the same, each run the batch under its policy: every delete_file call waits, the denied ones never run', async () => {
    for (const own of [{}, { approve: { delete_file: true, other: false } }]) {
      const t = setup('batchpolicy');
      try {
        t.worker({ workerId: 'w', concurrency: 2, ...own });
        const asked: string[] = [];
        const batch = await submitBatch(TASKS, {
          connection: url,
          name: 'runs',
          prefix: t.prefix,
          batchId: 'policy-1',
          approve: { delete_file: true },
          onApproval: async (request) => {
            asked.push(request.id);
            for (const call of request.calls)
              if ((call.input as { path: string }).path.startsWith('a')) await request.approve(call.callId);
              else await request.deny(call.callId, 'keep it');
          },
        });
        const report = await batch.report();
        expect(report.runs.map((r) => [r.id, r.outcome])).toEqual(TASKS.map((x) => [x.id, 'end_of_turn']));
        // Every run with a delete_file call waited: approved ones ran, b1 did not.
        expect(asked.sort()).toEqual(['t0', 't1', 't3', 't4']);
        expect([...t.deleted].sort()).toEqual(['a0', 'a1', 'a3', 'a4']);
        expect(report.runs.map((r) => r.approval?.calls)).toEqual([1, 2, undefined, 1, 1]);
      } finally {
        await t.cleanup();
      }
    }
  }, 60_000);

  it("refuses, by name, a worker's approve or approvalTimeoutMs that says otherwise than the batch's: its runs end in Error, no tool runs", async () => {
    for (const [label, own, expected] of [
      [
        'otherpolicy',
        { approve: { other_tool: true } },
        /`approve` to be left out of startBatchWorker\(\), or the same as batch policy-2's policy, which submitBatch\(\) stored \(\{"delete_file":true\}\)/,
      ],
      [
        'fnpolicy',
        { approve: () => true },
        /`approve` to be left out of startBatchWorker\(\), or the same as batch policy-2's policy/,
      ],
      [
        'othertimeout',
        { approve: { delete_file: true }, approvalTimeoutMs: 5 },
        /`approvalTimeoutMs` to be left out of startBatchWorker\(\), or the same as batch policy-2's \(none\)/,
      ],
    ] as const) {
      const t = setup(label);
      try {
        t.worker({ workerId: 'odd', ...own });
        const batch = await submitBatch([task('t0', ['a0'])], {
          connection: url,
          name: 'runs',
          prefix: t.prefix,
          batchId: 'policy-2',
          approve: { delete_file: true },
          onApproval: (request) => request.approve(request.calls[0]!.callId),
        });
        const report = await batch.report();
        expect(report.runs.map((r) => r.outcome)).toEqual(['error']);
        expect(report.runs[0]!.error?.message).toMatch(expected);
        expect(t.deleted).toEqual([]);
      } finally {
        await t.cleanup();
      }
    }
  }, 60_000);
});
