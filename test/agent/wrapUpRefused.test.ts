import { Budget, StepMirror } from 'agent-state-machine';
import { submitBatch } from '../../lib/integrations/bullmq/index';

// Where a final call cannot be made by us (a framework owns the loop) or a worker cannot hold
// it yet, `wrapUp` and `visible` are refused by name, never dropped.

describe('budget.wrapUp and budget.visible refused where a path cannot honour them', () => {
  it('a StepMirror (a framework owns the loop) refuses both, saying why', () => {
    expect(() => new StepMirror({ budget: { maxCostUsd: 1, wrapUp: true } })).toThrow(
      /^Expected `budget\.wrapUp` to be left out of a framework run \(StepMirror\): the framework makes its own calls with its own tools/,
    );
    expect(() => new StepMirror({ budget: { visible: true } })).toThrow(
      /^Expected `budget\.visible` to be left out of a framework run \(StepMirror\): the framework builds its own requests/,
    );
    const pool = new Budget({ maxCostUsd: 1, wrapUp: true }, { label: 'pool' });
    expect(() => new StepMirror({ sharedBudgets: [pool] })).toThrow(/^Expected `pool\.wrapUp` to be left out/);
    // Off is no request: nothing to refuse.
    expect(() => new StepMirror({ budget: { maxCostUsd: 1, visible: false } })).not.toThrow();
  });

  it('submitBatch refuses wrapUp and visible in total, and perRun.wrapUp beside a total dollar cap, before it connects', async () => {
    const opts = { connection: 'redis://127.0.0.1:1', name: 'q' };
    await expect(submitBatch([], { ...opts, total: { maxCostUsd: 1, wrapUp: true } })).rejects.toThrow(
      /^Expected `total\.wrapUp` to be left out of a distributed batch \(submitBatch\): the worker's runs hold their calls in the cluster's Redis budget/,
    );
    await expect(
      submitBatch([], { ...opts, perRun: { maxCostUsd: 1, wrapUp: true }, total: { maxCostUsd: 2 } }),
    ).rejects.toThrow(/^Expected `perRun\.wrapUp` to be left out beside `total\.maxCostUsd` in a distributed batch/);
    await expect(submitBatch([], { ...opts, total: { visible: true } })).rejects.toThrow(
      /^Expected `total\.visible` to be left out of a distributed batch \(submitBatch\)/,
    );
  });
});
