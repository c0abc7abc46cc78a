// A worker's run parked out of its slot (parkRun) whose turn ends while it waits (its approval
// timeout, an abort): it stops waiting, so that the worker reads nothing more for it. No Redis:
// a scripted agent, a ParkWatch whose reads are counted.
import type { AgentWithStateMachine, TurnResult } from 'agent-state-machine';
import { ParkWatch } from '../../../lib/integrations/bullmq/ParkWatch';
import { parkRun, type RunApprovals } from '../../../lib/integrations/bullmq/parkRun';
import { WorkerSlots } from '../../../lib/integrations/bullmq/WorkerSlots';

const ended = { outcome: 'cancelled' } as TurnResult;

/** A parked run on its own watch, its turn's end in the test's hands, every read of the watch counted. */
function parkedRun() {
  const reads: string[] = [];
  const watch = new ParkWatch((error) => {
    throw error;
  });
  let endTurn!: (result: TurnResult) => void;
  const next = new Promise<TurnResult>((resolve) => (endTurn = resolve));
  const agent = {
    continueTurn: () => next,
    awaitingBudget: true,
    awaitingApproval: true,
    pendingApprovals: [{ callId: 'a', name: 'delete_file' }],
  } as unknown as AgentWithStateMachine;
  const approvals: RunApprovals = {
    ask: () => Promise.resolve(),
    answers: (_park, _ids, signal) =>
      watch.wait(
        'approval',
        () => {
          reads.push('approval');
          return Promise.resolve(undefined);
        },
        () => false,
        signal,
        'for approval',
      ),
    close: () => Promise.resolve(),
  };
  const parking = parkRun({
    slots: new WorkerSlots(1),
    watch,
    budgetKey: 'budget',
    readRaises: () => {
      reads.push('budget');
      return Promise.resolve(0);
    },
    approvals,
    signal: new AbortController().signal,
    end: () => undefined,
    onSlot: () => undefined,
    onProblem: (message) => {
      throw new Error(message);
    },
  });
  return { reads, watch, agent, parking, endTurn };
}

describe('parkRun', () => {
  it.each([
    ['at the cap', 'budget', { outcome: 'awaiting_budget', awaitingBudget: { raises: 0 } }],
    ['for approval', 'approval', { outcome: 'awaiting_approval' }],
  ])('a run parked %s whose turn ends stops waiting: its key is read no more', async (_how, key, paused) => {
    const { reads, watch, agent, parking, endTurn } = parkedRun();
    try {
      const result = parking.awaitPause(agent, paused as TurnResult);
      await parking.parked;
      watch.heard(key);
      await new Promise<void>((resolve) => setImmediate(resolve));
      expect(reads.filter((k) => k === key).length).toBeGreaterThan(0);
      endTurn(ended);
      expect(await result).toBe(ended);
      reads.length = 0;
      watch.heard(key);
      await new Promise<void>((resolve) => setImmediate(resolve));
      expect(reads).toEqual([]);
    } finally {
      watch.close();
    }
  });
});
