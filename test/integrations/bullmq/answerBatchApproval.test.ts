// `readBatchApprovals` and `answerBatchApproval` from code, beside `onApproval`: both answer
// through the same Redis records, each answer keeps who gave it (the handle and process for
// `onApproval`, the name given for `answerBatchApproval`), a second answer is refused saying
// who gave the first, and the run goes on once every call has one. Real Redis, a worker in
// this process.
import * as os from 'node:os';
import {
  answerBatchApproval,
  readBatchApprovals,
  startBatchWorker,
  submitBatch,
  type BatchWorkerHandle,
} from '../../../lib/integrations/bullmq/index';
import { deletePrefix, releaseRedis, testRedisUrl, uniquePrefix } from '../../helpers/redis';
import { deletingAgent, isDeletingPayload } from './fixtures/deletingAgent';

let url: string;
beforeAll(async () => {
  url = await testRedisUrl();
});
afterAll(() => releaseRedis());

describe('answerBatchApproval and readBatchApprovals beside onApproval', () => {
  it('an answer from onApproval and one from answerBatchApproval reach the same run, each kept with who gave it, each taken once', async () => {
    const prefix = uniquePrefix('answerapi');
    const deleted: string[] = [];
    let worker: BatchWorkerHandle | undefined;
    try {
      worker = startBatchWorker({
        connection: url,
        name: 'runs',
        prefix,
        approve: { delete_file: true },
        agent: (t) => {
          if (!isDeletingPayload(t.payload)) throw new Error(`task ${t.id} has no files`);
          return deletingAgent(t.payload, (path) => deleted.push(path));
        },
        onError: false,
        closeTimeoutMs: 1000,
      });
      let answeredFirst!: () => void;
      const firstIn = new Promise<void>((resolve) => (answeredFirst = resolve));
      const batch = await submitBatch([{ id: 't0', input: 'clean up', payload: { files: ['a0', 'b0'] } }], {
        connection: url,
        name: 'runs',
        prefix,
        batchId: 'answer-api',
        // Answers d0 only: the run waits on d1 still.
        onApproval: async (request) => {
          await request.approve('d0');
          answeredFirst();
        },
      });
      await firstIn;
      const place = { connection: url, batchId: 'answer-api' };
      const waiting = await readBatchApprovals(place);
      expect(waiting).toMatchObject({ batchId: 'answer-api', name: 'runs', prefix, running: true, runs: ['t0'] });
      expect(
        waiting.calls.map(({ run, callId, tool, input, answer }) => ({ run, callId, tool, input, answer })),
      ).toEqual([
        {
          run: 't0',
          callId: 'd0',
          tool: 'delete_file',
          input: { path: 'a0' },
          answer: {
            approved: true,
            by: `onApproval of submitBatch (pid ${process.pid} on ${os.hostname()})`,
            at: expect.any(Number),
          },
        },
        { run: 't0', callId: 'd1', tool: 'delete_file', input: { path: 'b0' }, answer: undefined },
      ]);
      for (const call of waiting.calls) expect(call.since).toEqual(expect.any(Number));

      // A second answer to d0: refused, naming who gave the first.
      await expect(answerBatchApproval({ ...place, run: 't0', callId: 'd0', approved: false })).rejects.toThrow(
        /call d0 of run t0 was answered already \(approved by onApproval of submitBatch \(pid \d+ on .*\) at \d{4}-/,
      );
      const given = await answerBatchApproval({ ...place, run: 't0', approved: false, reason: 'keep b0', by: 'carol' });
      expect(given).toMatchObject({ complete: true, name: 'runs', prefix });
      expect(given.calls.map((c) => c.callId)).toEqual(['d1']);

      const report = await batch.report();
      expect(report.runs.map((r) => [r.id, r.outcome, r.approval?.calls])).toEqual([['t0', 'end_of_turn', 2]]);
      expect(deleted).toEqual(['a0']);
      // The request closed: nothing waits, and a late answer is refused saying how each call was answered.
      expect((await readBatchApprovals(place)).calls).toEqual([]);
      await expect(answerBatchApproval({ ...place, run: 't0', approved: true })).rejects.toThrow(
        /^every call run t0 waited on was answered already \(d0: approved by .+ at \d{4}-[\d-]+T[\d:.]+Z; d1: denied by carol at [\d-]+T[\d:.]+Z\): the run has gone on with them; nothing waits for another answer$/,
      );
      await expect(answerBatchApproval({ ...place, run: 't0', callId: 'd1', approved: true })).rejects.toThrow(
        /^call d1 of run t0 was answered already \(denied by carol at [\d-]+T[\d:.]+Z\): the run has gone on with it/,
      );
      await expect(answerBatchApproval({ ...place, run: 't9', approved: true })).rejects.toThrow(
        'Expected `run` to be the id of a run of batch answer-api (t0), got `t9`',
      );
      await expect(
        answerBatchApproval({ ...place, run: 't0', approved: true, by: '' } as Parameters<
          typeof answerBatchApproval
        >[0]),
      ).rejects.toThrow('Expected `by` to be who answers (a non-empty string), got ``');
    } finally {
      await worker?.close();
      await deletePrefix(url, prefix);
    }
  }, 60_000);

  it('a batch id on two queues is refused naming the id and both queues, and found once its queue is given', async () => {
    const prefix = uniquePrefix('twoqueues');
    try {
      // Submitted with no worker: the budget keys are what find the batch.
      for (const name of ['left', 'right'])
        await submitBatch([{ id: 't0', input: 'x' }], { connection: url, name, prefix, batchId: 'same-id' });
      const both = readBatchApprovals({ connection: url, batchId: 'same-id', prefix });
      await expect(both).rejects.toMatchObject({ argument: 'batchId', value: 'same-id' });
      await expect(both).rejects.toThrow(
        `batch same-id is on 2 queues (prefix ${prefix}, queue left; prefix ${prefix}, queue right); give \`name\` and \`prefix\` (on the command line, --queue and --prefix), got \`same-id\` (string)`,
      );
      await expect(
        readBatchApprovals({ connection: url, batchId: 'same-id', prefix, name: 'right' }),
      ).resolves.toMatchObject({
        name: 'right',
        runs: ['t0'],
        calls: [],
      });
    } finally {
      await deletePrefix(url, prefix);
    }
  });
});
