import {
  AgentWithStateMachine,
  BudgetExceededError,
  createScriptedAgent,
  runBatch,
  TurnInProgressError,
} from '../../lib/index';
import { StepMirror } from '../../lib/agent/StepMirror';
import { drive } from '../helpers/drive';
import { manualClock } from '../helpers/manualClock';

describe('AgentWithStateMachine deadlines and limits', () => {
  it('.runTurn() aborts a stalled LLM call when maxWallMs passes and ends budget_exceeded', async () => {
    // The injected clock says 60 ms pass once the call has started; the call itself stalls
    // until its signal aborts. The deadline's timer checks that clock, so load cannot change the outcome.
    const clock = manualClock();
    let aborted = false;
    const agent = createScriptedAgent({ replies: [] });
    agent.sendUserMessage = (_message, ctx) => {
      clock.advance(60);
      return new Promise((_resolve, reject) => {
        ctx.signal.addEventListener('abort', () => {
          aborted = true;
          reject(new Error('aborted'));
        });
      });
    };
    const adapter = new AgentWithStateMachine(agent, {
      logger: false,
      clock: clock.now,
      budget: { maxWallMs: 40 },
      cancelGraceMs: 10,
      maxHistorySize: Infinity,
    });
    const result = await adapter.runTurn('go');
    expect(aborted).toBe(true);
    expect(result.outcome).toBe('budget_exceeded');
    expect(result.error).toBeInstanceOf(BudgetExceededError);
    expect(result.error!.message).toBe('budget exceeded: 60 ms of wall time, of 40 ms after 1 LLM call');
    const last = adapter.machine.history().at(-1)!;
    expect(last.to).toBe('Error');
    expect(last.description).toBe(
      'budget exceeded: 60 ms of wall time, of 40 ms after 1 LLM call (deadline passed during SendingToLLM)',
    );
    expect(last.data).toMatchObject({ outcome: 'budget_exceeded', limit: 'maxWallMs' });
  });

  it("a StepMirror's run aborts its signal when maxWallMs passes, and ends budget_exceeded when the framework stops", async () => {
    const clock = manualClock();
    const mirror = new StepMirror({ logger: false, clock: clock.now, budget: { maxWallMs: 40 } });
    mirror.runStart('go');
    expect(await mirror.modelCallStart()).toBeUndefined();
    const aborted = new Promise<unknown>((resolve) =>
      mirror.signal.addEventListener('abort', () => resolve(mirror.signal.reason)),
    );
    // 60 ms pass on the injected clock while the model call is out: the deadline's timer reads it.
    clock.advance(60);
    expect(String(((await aborted) as { spent?: { message?: string } }).spent?.message)).toBe(
      'budget exceeded: 60 ms of wall time, of 40 ms after 1 LLM call',
    );
    // The framework's loop stops for the abort.
    const result = mirror.runAborted();
    expect(result.outcome).toBe('budget_exceeded');
    expect(result.error).toBeInstanceOf(BudgetExceededError);
    const last = mirror.machine.history().at(-1)!;
    expect(last.description).toBe(
      'budget exceeded: 60 ms of wall time, of 40 ms after 1 LLM call (deadline passed during SendingToLLM)',
    );
    expect(last.data).toMatchObject({ outcome: 'budget_exceeded', limit: 'maxWallMs' });
    // The next run gets a fresh signal.
    mirror.runStart('again');
    expect(mirror.signal.aborted).toBe(false);
  });

  it('runBatch() ends when total.maxWallMs passes while an agent factory hangs', async () => {
    const report = await runBatch(
      [
        { id: 'hangs', input: 'x', agent: () => new Promise(() => undefined) },
        { id: 'later', input: 'y', agent: createScriptedAgent({ replies: [{ text: 'ok' }] }) },
      ],
      { concurrency: 1, total: { maxWallMs: 30 }, cancelGraceMs: 10, logger: false },
    );
    expect(report.runs.map((r) => r.outcome)).toEqual(['budget_exceeded', 'skipped']);
    expect(report.runs[0]!.error!.message).toMatch(
      /^the batch's total budget exceeded: \d+ ms of wall time, of 30 ms .* while the agent was being created$/,
    );
  });

  it('.setBudget() raises a spent budget on the same agent, keeping the usage; not during a turn', async () => {
    const d = drive(
      {
        replies: [
          { text: 'a', usage: { costUsd: 0.02 } },
          { text: 'b', usage: { costUsd: 0.02 } },
        ],
      },
      { budget: { maxCostUsd: 0.01, strict: false } },
    );
    expect((await d.adapter.runTurn('1')).outcome).toBe('end_of_turn');
    expect((await d.adapter.runTurn('2')).outcome).toBe('budget_exceeded');
    d.adapter.setBudget({ maxCostUsd: 1, strict: false });
    expect(d.adapter.budget).toEqual({ maxCostUsd: 1, strict: false });
    expect(d.adapter.usage.costUsd).toBe(0.02);
    expect((await d.adapter.runTurn('3')).text).toBe('b');
    expect(() => d.adapter.setBudget({ maxCostUsd: -1 })).toThrow(
      'Expected `limits.maxCostUsd` to be a non-negative finite number',
    );

    const slow = drive(
      { replies: [{ text: 'x', delayMs: 5 }] },
      { sleep: (ms) => new Promise((r) => setTimeout(r, ms)) },
    );
    const turn = slow.adapter.runTurn('go');
    expect(() => slow.adapter.setBudget({})).toThrow(TurnInProgressError);
    await turn;
  });

  it('.runTurn(input, { budget }) adds limits for that turn alone', async () => {
    const d = drive({
      replies: [
        { toolCalls: [{ id: 'c1', name: 'bash' }], usage: { costUsd: 0.01 } },
        { text: 'next', usage: { costUsd: 0.01 } },
      ],
      tools: { bash: { output: 'ok' } },
    });
    const capped = await d.adapter.runTurn('1', { budget: { maxLlmCalls: 1 } });
    expect(capped.outcome).toBe('budget_exceeded');
    expect(capped.error!.message).toBe('turn budget exceeded: 1 of 1 LLM call');
    expect((await d.adapter.runTurn('2')).text).toBe('next');
    await expect(d.adapter.runTurn('3', { budget: { maxTokens: 'lots' as never } })).rejects.toThrow(
      'Expected `options.budget.maxTokens` to be a non-negative finite number',
    );
  });
});
