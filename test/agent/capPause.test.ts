import { AgentWithStateMachine } from '../../lib/agent/AgentWithStateMachine';
import { Budget } from '../../lib/agent/money/Budget';
import { StepMirror } from '../../lib/agent/StepMirror';
import { pausingLoop, pricing } from '../fixtures/pausingLoop';

// Each call holds $0.01 and costs $0.006.
const loop = pausingLoop;

describe("an adapter under a shared budget with whenSpent: 'pause'", () => {
  it('stops with awaiting_budget at the refused call, waits out of its wall time, and goes on once raised and retried', async () => {
    const pool = new Budget({ maxCostUsd: 0.015 }, { whenSpent: 'pause', label: 'the pool' });
    const agent = new AgentWithStateMachine(loop(), {
      logger: false,
      pricing,
      minOutputTokens: 1000,
      sharedBudgets: [pool],
    });
    const paused = await agent.runTurn('go');
    expect(paused.outcome).toBe('awaiting_budget');
    expect(paused.awaitingBudget).toMatchObject({ limit: 'maxCostUsd', max: 0.015, hold: 0.01, raises: 0 });
    expect(paused.usage.costUsd).toBeCloseTo(0.006, 10);
    expect(agent.awaitingBudget).toBe(true);
    expect(agent.running).toBe(true);
    // Retried without a raise: refused again, a stop of its own.
    agent.retryBudget();
    const again = await agent.continueTurn();
    expect(again.outcome).toBe('awaiting_budget');
    pool.raise(0.05);
    agent.retryBudget();
    const ended = await agent.continueTurn();
    expect(ended.outcome).toBe('end_of_turn');
    expect(ended.text).toBe('done');
    expect(pool.usage.costUsd).toBeCloseTo(0.012, 10);
    expect(agent.awaitingBudget).toBe(false);
    expect(() => agent.retryBudget()).toThrow(/`retryBudget\(\)` to be a turn waiting with outcome awaiting_budget/);
  });

  it('a cancel while it waits ends the turn cancelled, with nothing more spent', async () => {
    const pool = new Budget({ maxCostUsd: 0.015 }, { whenSpent: 'pause' });
    const agent = new AgentWithStateMachine(loop(), {
      logger: false,
      pricing,
      minOutputTokens: 1000,
      sharedBudgets: [pool],
    });
    expect((await agent.runTurn('go')).outcome).toBe('awaiting_budget');
    const next = agent.continueTurn();
    expect(agent.cancel('enough')).toBe(true);
    const ended = await next;
    expect(ended.outcome).toBe('cancelled');
    expect(pool.usage.costUsd).toBeCloseTo(0.006, 10);
  });

  it('a mirror refuses a pausing shared budget by name: a framework loop cannot wait at a refused call', () => {
    const pool = new Budget({ maxCostUsd: 1 }, { whenSpent: 'pause', label: 'the pool' });
    expect(() => new StepMirror({ logger: false, pricing, sharedBudgets: [pool] })).toThrow(
      /`sharedBudgets\[0\]` to be a budget that stops at its cap: a mirror cannot pause/,
    );
  });
});
