// A worker's approval requests of one run, one after another, waited for on one ParkWatch: each
// request's waiter reads its own request's answers, even while a waiter of an earlier request of
// the same run is still registered (a turn that ended first, an earlier attempt). Real Redis.
import type { ApprovalDecision, PendingApproval } from 'agent-state-machine';
import { USAGE_CODES, TIME_INDEX } from '../../../lib/integrations/bullmq/budgetFields';
import { batchKeys } from '../../../lib/integrations/bullmq/batchKeys';
import {
  approvalWatchKey,
  decideApproval,
  runApprovalsKey,
  type Within,
} from '../../../lib/integrations/bullmq/approvalRecords';
import { ParkWatch } from '../../../lib/integrations/bullmq/ParkWatch';
import { runApprovals } from '../../../lib/integrations/bullmq/workerApprovals';
import { useFileRedis } from '../../helpers/redis';

const redis = useFileRedis('approvalRequests');
const within: Within = (_what, operation) => operation();
const call = (callId: string): PendingApproval => ({ callId, name: 'delete_file', input: { path: callId } });

describe("a run's approval requests in sequence", () => {
  it("the second request's waiter gets its own answers, never the first's, while the first's waiter is still registered", async () => {
    const keys = batchKeys(redis.prefix, 'runs', 'b1');
    // The batch's budget exists (asking and answering refuse a batch whose budget is gone).
    await redis.client.hset(keys.budget, USAGE_CODES[TIME_INDEX]!, Date.now());
    const place = { redis: redis.client, keys, prefix: redis.prefix, name: 'runs', batchId: 'b1', index: 0 };
    const errors: Error[] = [];
    const watch = new ParkWatch((error) => errors.push(error));
    const first = new AbortController();
    const second = new AbortController();
    try {
      // Attempt 1 asks, and its waiter stays registered (its turn ended first: nothing aborts it).
      const attempt1 = runApprovals(place, 1, watch, within);
      await attempt1.ask(1, [call('a')]);
      const firstAnswers = attempt1.answers(1, ['a'], first.signal);
      // Its answer is written; before that waiter reads it, the run's next request is made and waited for.
      const a: ApprovalDecision = { callId: 'a', approved: false, reason: 'no' };
      await decideApproval({ ...place, requestId: '1.1', taskId: 't0' }, a, within);
      const attempt2 = runApprovals(place, 2, watch, within);
      await attempt2.ask(1, [call('b')]);
      let secondAnswers: ApprovalDecision[] | undefined | 'pending' = 'pending';
      const secondDone = attempt2.answers(1, ['b'], second.signal).then((answers) => (secondAnswers = answers));

      expect(await firstAnswers).toEqual([a]);
      // Every read begun so far has settled (the second waiter's own read of its request).
      await redis.client.ping();
      await new Promise<void>((resolve) => setImmediate(resolve));
      expect(secondAnswers).toBe('pending');

      const b: ApprovalDecision = { callId: 'b', approved: true };
      await decideApproval({ ...place, requestId: '2.1', taskId: 't0' }, b, within);
      // Nobody publishes here (no subscriber): the worker's poll finds the answer.
      await secondDone;
      expect(secondAnswers).toEqual([b]);
      expect(errors).toEqual([]);
    } finally {
      first.abort();
      second.abort();
      watch.close();
    }
  });

  it("a later attempt's request takes an answer given to the earlier one for the same call (id, tool and input), not for another call of that id", async () => {
    const keys = batchKeys(redis.prefix, 'runs', 'b2');
    await redis.client.hset(keys.budget, USAGE_CODES[TIME_INDEX]!, Date.now());
    const place = { redis: redis.client, keys, prefix: redis.prefix, name: 'runs', batchId: 'b2', index: 0 };
    const watch = new ParkWatch(() => undefined);
    const stop = new AbortController();
    try {
      // Attempt 1 asks for two calls; both are answered while no worker holds the run (its worker lost).
      await runApprovals(place, 1, watch, within).ask(1, [call('a'), call('b')]);
      const a: ApprovalDecision = { callId: 'a', approved: true };
      const b: ApprovalDecision = { callId: 'b', approved: false, reason: 'no' };
      for (const d of [a, b]) await decideApproval({ ...place, requestId: '1.1', taskId: 't0' }, d, within);
      // Attempt 2 asks again: `a` as it was, `b` with another input (another call, under the same id).
      const attempt2 = runApprovals(place, 2, watch, within);
      await attempt2.ask(1, [call('a'), { ...call('b'), input: { path: 'elsewhere' } }]);
      expect(await redis.client.hget(keys.approvals, '0:2.1:a')).toBe(JSON.stringify(a));
      expect(await redis.client.hget(keys.approvals, '0:1.1:a')).toBeNull();
      expect(await redis.client.hget(keys.approvals, '0:2.1:b')).toBeNull();
      // `b` is asked again: its answer comes to attempt 2's request.
      const b2: ApprovalDecision = { callId: 'b', approved: true };
      await decideApproval({ ...place, requestId: '2.1', taskId: 't0' }, b2, within);
      expect(await attempt2.answers(1, ['a', 'b'], stop.signal)).toEqual([a, b2]);
    } finally {
      stop.abort();
      watch.close();
    }
  });

  it("the approval channel's message names the run: every request of that run being waited for is read, no other run's", async () => {
    jest.useFakeTimers();
    const keys = batchKeys('p', 'runs', 'b1');
    const watch = new ParkWatch(() => undefined);
    const controller = new AbortController();
    const reads: string[] = [];
    const waitOn = (index: number, requestId: string) => {
      const key = approvalWatchKey(keys, index, requestId);
      return watch.wait(
        key,
        () => Promise.resolve(reads.push(key)),
        () => false,
        controller.signal,
        'for approval',
      );
    };
    try {
      const waits = [waitOn(1, '1.1'), waitOn(1, '2.1'), waitOn(10, '1.1')];
      // Each read once as it starts waiting (what was written before).
      await Promise.resolve();
      reads.length = 0;
      watch.heardUnder(runApprovalsKey(keys, 1));
      await Promise.resolve();
      expect(reads.sort()).toEqual([approvalWatchKey(keys, 1, '1.1'), approvalWatchKey(keys, 1, '2.1')]);
      controller.abort();
      expect(await Promise.all(waits)).toEqual([undefined, undefined, undefined]);
    } finally {
      watch.close();
      jest.useRealTimers();
    }
  });
});
