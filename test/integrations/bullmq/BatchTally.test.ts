// What a handle knows of its batch from the events it read (BatchTally): runs reported, their
// outcomes, and the report it makes of them. No Redis: the events are given.
import { emptyUsage } from '../../../lib/agent/UsageTotals';
import { BatchTally } from '../../../lib/integrations/bullmq/BatchTally';
import type { WireRunReport } from '../../../lib/integrations/bullmq/wireReport';

const finished = (id: string, outcome: WireRunReport['outcome'], worker: string): WireRunReport => ({
  id,
  outcome,
  usage: emptyUsage(),
  durationMs: 1,
  transitions: 2,
  worker,
});

const batch = { batchId: 'b1', perRun: undefined, total: undefined, startedAt: 0, stopped: undefined };

describe('BatchTally', () => {
  it('counts each run reported once, as its outcomes count it, and tells it with the progress', () => {
    const tally = new BatchTally(['t0', 't1', 't2'], undefined);
    tally.apply({ t: 's', i: 0, w: 'w1', a: 1, c: 2 });
    tally.apply({ t: 's', i: 1, w: 'w1', a: 1, c: 2 });
    expect(tally.done).toBe(0);
    tally.apply({ t: 'f', i: 0, r: finished('t0', 'end_of_turn', 'w1') });
    tally.apply({ t: 'f', i: 1, r: finished('t1', 'error', 'w1') });
    // A second report of a run (another reader's copy of the event) is not counted again.
    tally.apply({ t: 'f', i: 1, r: finished('t1', 'error', 'w1') });
    expect(tally.done).toBe(2);
    expect(tally.progress).toMatchObject({ done: 2, total: 3, running: 0 });
    expect(tally.progress.outcomes).toMatchObject({ end_of_turn: 1, error: 1 });
    expect(tally.notStarted()).toEqual([2]);
  });

  it("report()'s workers are the report's own: changing them changes neither the tally nor a later report", () => {
    const tally = new BatchTally(['t0'], undefined);
    tally.apply({ t: 's', i: 0, w: 'w1', a: 1, c: 2 });
    tally.apply({ t: 'f', i: 0, r: finished('t0', 'end_of_turn', 'w1') });
    const first = tally.report(batch);
    expect(first.workers).toEqual({ w1: { concurrency: 2, runs: 1 } });
    first.workers.w1!.runs = 99;
    first.workers.w2 = { concurrency: 1, runs: 1 };
    expect(tally.report(batch).workers).toEqual({ w1: { concurrency: 2, runs: 1 } });
  });

  it("reads a report from a worker before the rename ('continued') as 'recovered', and leaves the others as they are", () => {
    const tally = new BatchTally(['t0', 't1'], undefined);
    const resume = { recordedCalls: 2, servedTools: 1, rerunTools: 0, interruptedTools: 0 };
    // The old worker's words, as its events stay in Redis: not a value this version's types allow.
    const old = {
      ...finished('t0', 'end_of_turn', 'w1'),
      resumed: 'continued',
      resume: { ...resume, mode: 'continued' },
    };
    tally.apply({ t: 'f', i: 0, r: old as unknown as WireRunReport });
    tally.apply({
      t: 'f',
      i: 1,
      r: { ...finished('t1', 'end_of_turn', 'w1'), resumed: 'restarted', resume: { ...resume, mode: 'restarted' } },
    });
    const [t0, t1] = tally.report(batch).runs;
    expect(t0).toMatchObject({ resumed: 'recovered', resume: { ...resume, mode: 'recovered' } });
    expect(t1).toMatchObject({ resumed: 'restarted', resume: { mode: 'restarted' } });
  });
});
