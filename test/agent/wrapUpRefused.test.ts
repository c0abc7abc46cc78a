import { Budget, StepMirror } from 'agent-state-machine';
import { submitBatch } from '../../lib/integrations/bullmq/index';

// Where a final call cannot be made by us (a framework owns the loop), `wrapUp` and `visible`
// are refused by name, never dropped.

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

  it("a StepMirror refuses an external budget's endings too (a BullMQ batch's total.wrapUp on a framework run)", () => {
    const outside = {
      label: 'total',
      endings: { wrapUp: true as const },
      holdsWrapUp: true,
      reserve: () => Promise.resolve(undefined),
      charge: () => Promise.resolve(undefined),
    };
    expect(() => new StepMirror({ externalBudgets: [outside] })).toThrow(
      /^Expected `total\.wrapUp` to be left out of a framework run \(StepMirror\): the framework makes its own calls/,
    );
  });

  it("submitBatch refuses total.wrapUp beside whenSpent: 'pause', before it connects", async () => {
    const opts = { connection: 'redis://127.0.0.1:1', name: 'q' };
    await expect(
      submitBatch([], { ...opts, total: { maxCostUsd: 1, wrapUp: true, whenSpent: 'pause' } }),
    ).rejects.toThrow(/^Expected `total\.wrapUp` to be left out when `whenSpent` is 'pause'/);
  });
});
