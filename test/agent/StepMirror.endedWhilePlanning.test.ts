import { Budget } from '../../lib/agent/money/Budget';
import { StepMirror } from '../../lib/agent/StepMirror';
import { validateHistory } from '../../lib/history/validateHistory';

// A model call's planning awaits: the budgets' figures under `budget.visible` (a round trip for
// an external one), a store's commit of the ledger's reserve line. A framework that ends the run
// meanwhile (its loop failed, or it was aborted) has ended it for good: the call then gets the
// stop of an ended run, the history keeps one ending (not a second one forced from the terminal
// state), and the attempt's hold, let go of as the run ended, is not let go of twice.

const pricing = (u: { inputTokens?: number; outputTokens?: number }): number =>
  (u.inputTokens ?? 0) * 1e-6 + (u.outputTokens ?? 0) * 4e-6;
const BOUND = { inputTokens: 10, maxOutputTokens: 10, model: 'm' };

function planningMirror(wrapUp = false): StepMirror {
  return new StepMirror({
    logger: false,
    pricing,
    clock: () => 1000,
    budget: { maxCostUsd: 1, visible: true, ...(wrapUp && { wrapUp: true }) },
    honours: { wrapUp: true, budgetNote: true },
  });
}

describe('StepMirror: a run ended while a model call is planned', () => {
  it('a failure found after the run failed does not end it again (no bound under a strict cap)', async () => {
    const mirror = planningMirror();
    mirror.runStart('go');
    const planned = mirror.modelCallPlan(() => 'no bound here');
    const ended = mirror.runFailed(new Error('the framework failed meanwhile'));
    // The run's own error is no stop a hook throws (an LLMCallError): the stop names how the run ended.
    expect(await planned).toMatchObject({
      name: 'TurnCancelledError',
      message: expect.stringContaining('run 1 has ended (error)'),
    });
    expect(mirror.result).toBe(ended);
    const history = mirror.machine.history();
    expect(history.map((r) => r.to)).toEqual(['WaitingForUserInput', 'SendingToLLM', 'Error']);
    expect(validateHistory(history, mirror.machine.table).issues).toEqual([]);
  });

  it('an abort meanwhile ends the run once (no second Cancelled record)', async () => {
    const mirror = planningMirror();
    mirror.runStart('go');
    const planned = mirror.modelCallPlan(() => BOUND);
    const ended = mirror.runAborted('aborted meanwhile');
    const stop = await planned;
    expect(stop).toBe(ended.error);
    expect(mirror.result).toBe(ended);
    expect(mirror.machine.history().map((r) => r.to)).toEqual(['WaitingForUserInput', 'SendingToLLM', 'Cancelled']);
  });

  it('with budget.wrapUp, a call it cannot plan after the run failed does not end it again', async () => {
    const mirror = planningMirror(true);
    mirror.runStart('go');
    const planned = mirror.modelCallPlan(() => 'no bound here');
    const ended = mirror.runFailed(new Error('the framework failed meanwhile'));
    expect(await planned).toMatchObject({ message: expect.stringContaining('run 1 has ended (error)') });
    expect(mirror.result).toBe(ended);
    expect(mirror.machine.history().map((r) => r.to)).toEqual(['WaitingForUserInput', 'SendingToLLM', 'Error']);
  });

  it('a reserve line not kept after the run was aborted meanwhile does not end it again', async () => {
    let reject: (error: Error) => void = () => undefined;
    const sink = {
      write: (): void => undefined,
      journal: (entry: { type: string }) =>
        entry.type === 'reserve' ? new Promise<void>((_, no) => (reject = no)) : undefined,
    };
    const mirror = new StepMirror({ logger: false, pricing, clock: () => 1000, sink, ledger: true });
    mirror.runStart('go');
    const started = mirror.modelCallStart(BOUND);
    const ended = mirror.runAborted('aborted meanwhile');
    reject(new Error('the store went away'));
    expect(await started).toBe(ended.error);
    expect(mirror.result).toBe(ended);
    expect(mirror.machine.history().map((r) => r.to)).toEqual(['WaitingForUserInput', 'SendingToLLM', 'Cancelled']);
  });

  it("a shared strict cap keeps another run's hold when a run ends while its reserve line is awaited", async () => {
    const shared = new Budget({ maxCostUsd: 1 });
    const other = new StepMirror({ logger: false, pricing, clock: () => 1000, sharedBudgets: [shared] });
    other.runStart('go');
    expect(await other.modelCallStart(BOUND)).toBeUndefined();
    const othersHold = shared.held;
    expect(othersHold).toBeGreaterThan(0);
    let keep: () => void = () => undefined;
    const sink = {
      write: (): void => undefined,
      journal: (entry: { type: string }) =>
        entry.type === 'reserve' ? new Promise<void>((yes) => (keep = yes)) : undefined,
    };
    const mirror = new StepMirror({
      logger: false,
      pricing,
      clock: () => 1000,
      sink,
      ledger: true,
      sharedBudgets: [shared],
    });
    mirror.runStart('go');
    const started = mirror.modelCallStart(BOUND);
    // Its hold is let go of (and charged: it may have left) as the run ends; the gate must not let go of it again.
    mirror.runAborted('aborted meanwhile');
    keep();
    expect(await started).toMatchObject({ name: 'TurnCancelledError' });
    expect(shared.held).toBe(othersHold);
  });
});
