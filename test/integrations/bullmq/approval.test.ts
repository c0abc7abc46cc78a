// A BullMQ batch whose runs ask approval (`startBatchWorker({ approve })`): a run whose LLM asks
// for a tool under the policy parks on its worker holding no slot and no job, the producer's
// `onApproval` (or an attached handle's) answers through Redis, and the run goes on with the
// answers in the next free slot. Real Redis, workers in this process.
import { InvalidArgumentError, type BatchProgress } from 'agent-state-machine';
import {
  attachBatch,
  startBatchWorker,
  submitBatch,
  type BatchWorkerHandle,
  type DistributedApprovalRequest,
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
  /** Paths the workers' `delete_file` really deleted, in order. */
  const deleted: string[] = [];
  return {
    prefix,
    deleted,
    worker(options: Partial<Parameters<typeof startBatchWorker>[0]> = {}) {
      const w = startBatchWorker({
        connection: url,
        name: 'runs',
        prefix,
        approve: { delete_file: true },
        agent: (t) => {
          if (!isDeletingPayload(t.payload)) throw new Error(`task ${t.id} has no files`);
          return deletingAgent(t.payload, (path) => deleted.push(path));
        },
        onError: false,
        // A run left parked when a test fails is cancelled soon.
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

/** Resolves once `test` holds, checked now and whenever `poke()` is called; rejects after `ms` naming `what`. */
function until(test: () => boolean, what: string, ms = 15_000) {
  let poke: () => void = () => undefined;
  const reached = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`never happened: ${what}`)), ms);
    poke = () => {
      if (!test()) return;
      clearTimeout(timer);
      resolve();
    };
  });
  poke();
  return { reached, poke: () => poke() };
}

describe('startBatchWorker({ approve }) with submitBatch({ onApproval })', () => {
  it('parks each run that asks, the answers travel through Redis: approved calls run (with the input given), denied ones do not, every task reported once', async () => {
    const t = setup('approve');
    const warn = jest.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
    try {
      t.worker({ workerId: 'w1', concurrency: 2 });
      const seen: DistributedApprovalRequest[] = [];
      const attachedSeen: DistributedApprovalRequest[] = [];
      const attachedHas = until(() => attachedSeen.some((r) => r.id === 't0'), "the attached handle's request for t0");
      const progress: BatchProgress['event'][] = [];
      const t0Ended = until(
        () => progress.some((e) => e.type === 'finished' && e.run.id === 't0'),
        't0 ended while t3 waits',
      );
      const checks: Array<Promise<void>> = [];
      const batch = await submitBatch(
        [task('t0', ['a0', 'b0']), task('t1', ['a1']), task('t2', []), task('t3', ['a3', 'b3'])],
        {
          connection: url,
          name: 'runs',
          prefix: t.prefix,
          batchId: 'approvals-1',
          onProgress: (p) => {
            progress.push(p.event);
            t0Ended.poke();
          },
          onApproval: (request) => {
            seen.push(request);
            const answering = (async () => {
              // What a request cannot take is refused at once, naming the call and the ones it waits on.
              expect(() => request.approve('nope')).toThrow(InvalidArgumentError);
              expect(() => request.approve('nope')).toThrow(/`callId`.*a call run t\d waits on \(d0(, d1)?\).*nope/);
              if (request.id === 't0') {
                await request.approve('d0');
                expect(() => request.approve('d0')).toThrow(/it was answered already/);
                // Another process answered nothing yet, but d0 is answered in Redis: refused there too.
                await attachedHas.reached;
                const other = attachedSeen.find((r) => r.id === 't0')!;
                await expect(other.approve('d0')).rejects.toThrow(/`callId`.*it was answered already/);
                await request.deny('d1', 'keep b0');
              } else if (request.id === 't1') {
                await request.approve('d0', { input: { path: 'a1-instead' } });
              } else {
                // Once t0 has ended, its request is closed in Redis: an answer from any handle is refused.
                await t0Ended.reached;
                const closed = attachedSeen.find((r) => r.id === 't0')!;
                await expect(closed.deny('d1')).rejects.toThrow(
                  /`callId`.*a call of a run still waiting \(run t0 has gone on or ended\)/,
                );
                await Promise.all([request.approve('d0'), request.deny('d1')]);
              }
            })();
            checks.push(answering);
            return answering;
          },
        },
      );
      const attached = await attachBatch({
        connection: url,
        name: 'runs',
        prefix: t.prefix,
        batchId: 'approvals-1',
        onApproval: (request) => {
          attachedSeen.push(request);
          attachedHas.poke();
        },
      });
      const report = await batch.report();
      await Promise.all(checks);

      expect(report.runs.map((r) => [r.id, r.outcome])).toEqual([
        ['t0', 'end_of_turn'],
        ['t1', 'end_of_turn'],
        ['t2', 'end_of_turn'],
        ['t3', 'end_of_turn'],
      ]);
      expect(report.totals.outcomes.end_of_turn).toBe(4);
      // Approved calls ran, with the input a person gave; denied ones never did.
      expect([...t.deleted].sort()).toEqual(['a0', 'a1-instead', 'a3']);
      expect(seen.map((r) => r.id).sort()).toEqual(['t0', 't1', 't3']);
      expect(seen.find((r) => r.id === 't0')!.calls).toEqual([
        { callId: 'd0', name: 'delete_file', input: { path: 'a0' } },
        { callId: 'd1', name: 'delete_file', input: { path: 'b0' } },
      ]);
      expect(report.runs.map((r) => r.approval && [r.approval.waits, r.approval.calls])).toEqual([
        [1, 2],
        [1, 1],
        undefined,
        [1, 2],
      ]);
      // Each run that asked parked and went on, as the progress said, out of `running` meanwhile.
      const parks = progress.filter((e) => e.type === 'parked').map((e) => e.type === 'parked' && [e.id, e.calls]);
      expect(parks.sort()).toEqual([
        ['t0', 2],
        ['t1', 1],
        ['t3', 2],
      ]);
      expect(progress.filter((e) => e.type === 'unparked')).toHaveLength(3);
      expect(progress.filter((e) => e.type === 'finished')).toHaveLength(4);

      // Once the batch is reported, a handle takes no answer: refused by name.
      expect((await attached.report()).runs).toHaveLength(4);
      const late = attachedSeen.find((r) => r.id === 't3')!;
      await expect(late.approve('d1')).rejects.toThrow(/a call of a run still waiting \(batch approvals-1 is reported/);
      // Each refused answer was also a process warning (an answer not awaited is never lost without a word).
      expect(warn.mock.calls.map(([w]) => String(w).replace(/: Expected.*/, ''))).toEqual([
        'batch approvals-1: the answer to d0 of run t0 was not taken',
        'batch approvals-1: the answer to d1 of run t0 was not taken',
        'batch approvals-1: the answer to d1 of run t3 was not taken',
      ]);
    } finally {
      warn.mockRestore();
      await t.cleanup();
    }
  }, 60_000);

  it('a parked run holds no slot: with concurrency 1, the next task runs to its end while the first waits for its answer', async () => {
    const t = setup('approveslot');
    try {
      const worker = t.worker({ workerId: 'w1', concurrency: 1 });
      const finished = new Set<string>();
      const asked: DistributedApprovalRequest[] = [];
      const secondDone = until(() => finished.has('t1'), 't1 ran while t0 was parked');
      const batch = await submitBatch([task('t0', ['a0']), task('t1', [])], {
        connection: url,
        name: 'runs',
        prefix: t.prefix,
        onProgress: (p) => {
          if (p.event.type === 'finished') finished.add(p.event.run.id);
          secondDone.poke();
        },
        onApproval: (request) => void asked.push(request),
      });
      // Answered only once the other task has run to its end in the worker's one slot.
      await secondDone.reached;
      expect(asked.map((r) => r.id)).toEqual(['t0']);
      expect(worker.running).toBe(1);
      await asked[0]!.approve('d0');
      const report = await batch.report();
      expect(report.runs.map((r) => [r.id, r.outcome, r.worker])).toEqual([
        ['t0', 'end_of_turn', 'w1'],
        ['t1', 'end_of_turn', 'w1'],
      ]);
      expect(t.deleted).toEqual(['a0']);
      expect(report.runs[0]!.approval!.waitedMs).toBeGreaterThan(0);
    } finally {
      await t.cleanup();
    }
  }, 60_000);

  it("the worker's approvalTimeoutMs ends a run left unanswered as runBatch does: cancelled, its call not run, reported once", async () => {
    const t = setup('approvetimeout');
    try {
      t.worker({ workerId: 'w1', concurrency: 1, approvalTimeoutMs: 100 });
      const batch = await submitBatch([task('t0', ['a0']), task('t1', [])], {
        connection: url,
        name: 'runs',
        prefix: t.prefix,
      });
      const report = await batch.report();
      expect(report.runs.map((r) => r.outcome)).toEqual(['cancelled', 'end_of_turn']);
      expect(report.runs[0]!.error?.message).toMatch(/no answer to the approval request within 100 ms/);
      expect(report.runs[0]!.approval).toMatchObject({ waits: 1, calls: 1 });
      expect(t.deleted).toEqual([]);
    } finally {
      await t.cleanup();
    }
  }, 60_000);

  it('refuses by name what it cannot honour', async () => {
    const base = { connection: url, name: 'runs', prefix: uniquePrefix('approverefuse') };
    // Beside `run` a policy is taken (the integration puts it on the framework's tools), but it must be one.
    expect(() =>
      startBatchWorker({ ...base, drive: () => undefined, approve: 'deploy' as never, onError: false }),
    ).toThrow(/`approve` to be an object \{ toolName: true \} or a function/);
    // Beside `run` the timeout needs no policy (the framework asks), but it is still a number of milliseconds.
    expect(() => startBatchWorker({ ...base, drive: () => undefined, approvalTimeoutMs: -1, onError: false })).toThrow(
      /`approvalTimeoutMs` to be a non-negative number of milliseconds/,
    );
    expect(() =>
      startBatchWorker({ ...base, agent: () => deletingAgent({ files: [] }, () => undefined), approvalTimeoutMs: 5 }),
    ).toThrow(/`approve`.*approval policy when approvalTimeoutMs is set/);
    expect(() =>
      startBatchWorker({
        ...base,
        agent: () => deletingAgent({ files: [] }, () => undefined),
        approve: 'all' as never,
      }),
    ).toThrow(/`approve`.*toolName: true/);
    // The batch's policy is stored in Redis: a function cannot be.
    await expect(submitBatch([], { ...base, approve: () => true } as never)).rejects.toThrow(
      /`approve`.*stored in Redis for every worker to read, and a function cannot be/,
    );
    await expect(submitBatch([], { ...base, onApproval: 'yes' as never })).rejects.toThrow(/`onApproval`.*a function/);
  });
});
