import {
  AgentWithStateMachine,
  Budget,
  ContractViolationError,
  createScriptedAgent,
  InvalidArgumentError,
  OperationError,
  type Pricing,
  UnboundedCallsError,
} from '../../lib/index';
import { drive } from '../helpers/drive';

// $1 per million input tokens, $4 per million output tokens: a call bounded at 1,000 in and
// 1,000 out may cost $0.005.
const pricing: Pricing = (u, { model }) =>
  model === 'm' ? (u.inputTokens ?? 0) * 1e-6 + (u.outputTokens ?? 0) * 4e-6 : undefined;
const bound = { inputTokens: 1000, maxOutputTokens: 1000, model: 'm' };
const reply = (outputTokens: number) => ({ text: 'ok', model: 'm', usage: { inputTokens: 1000, outputTokens } });

describe('strict maxCostUsd in process', () => {
  it('makes a call whose worst case fits exactly, and releases the unused part when the response arrives', async () => {
    const d = drive({ replies: [reply(250)], bound }, { pricing, budget: { maxCostUsd: 0.005, strict: true } });
    const result = await d.adapter.runTurn('go');
    expect(result.outcome).toBe('end_of_turn');
    expect(result.usage.costUsd).toBe(0.002);
    expect(d.agent.calls.filter((c) => c.op === 'sendUserMessage')).toEqual([
      { op: 'sendUserMessage', message: 'go', attempt: 1 },
    ]);
  });

  it('lowers the max output tokens to what is left, down to minOutputTokens', async () => {
    // $0.004 left: 1,000 input tokens ($0.001) and 750 output tokens ($0.003) fit, 751 do not.
    const d = drive({ replies: [reply(900)], bound }, { pricing, budget: { maxCostUsd: 0.004, strict: true } });
    const result = await d.adapter.runTurn('go');
    expect(result.outcome).toBe('end_of_turn');
    expect(d.agent.calls[1]).toEqual({ op: 'sendUserMessage', message: 'go', attempt: 1, maxOutputTokens: 750 });
    // The scripted provider stopped at 750 tokens: spend is the cap, exactly, never past it.
    expect(result.usage.costUsd).toBe(0.004);
  });

  it('refuses a call that does not fit even at the floor: budget_exceeded, naming the cap and the hold, no call made', async () => {
    const d = drive(
      { replies: [reply(10)], bound },
      { pricing, budget: { maxCostUsd: 0.004, strict: true }, minOutputTokens: 800 },
    );
    const result = await d.adapter.runTurn('go');
    expect(result.outcome).toBe('budget_exceeded');
    expect(d.agent.calls.some((c) => c.op === 'sendUserMessage')).toBe(false);
    expect(result.error!.message).toBe(
      'budget exceeded: the next LLM call may cost up to $0.0050, which does not fit beside $0.0000 of $0.0040 spent or held (strict) after 0 LLM calls',
    );
    const last = d.adapter.machine.history().at(-1)!;
    expect(last.data).toMatchObject({ limit: 'maxCostUsd', used: 0, max: 0.004, hold: 0.005 });
  });

  it('fails closed when the worst case cannot be priced: no call, an error naming the model', async () => {
    const d = drive(
      { replies: [reply(10)], bound: { ...bound, model: 'unknown-model' } },
      { pricing, budget: { maxCostUsd: 1, strict: true } },
    );
    const result = await d.adapter.runTurn('go');
    expect(result.outcome).toBe('error');
    expect(result.error).toBeInstanceOf(OperationError);
    expect(result.error!.message).toBe(
      'cost failed: a strict maxCostUsd cannot hold the worst case of this call (1000 input tokens, 1000 max output tokens): pricing has no price for model unknown-model; no call is made (set pricing for the model)',
    );
    expect(d.agent.calls.some((c) => c.op === 'sendUserMessage')).toBe(false);
  });

  it('a loop without llmCallBound under a dollar cap (strict by default) is refused at construction, naming what to give and strict: false', () => {
    const agent = createScriptedAgent({ replies: [] });
    for (const budget of [{ maxCostUsd: 1 }, { maxCostUsd: 1, strict: true }]) {
      expect(() => new AgentWithStateMachine(agent, { budget, logger: false })).toThrow(UnboundedCallsError);
      expect(() => new AgentWithStateMachine(agent, { budget, logger: false })).toThrow(InvalidArgumentError);
      expect(() => new AgentWithStateMachine(agent, { budget, logger: false })).toThrow(
        /^budget\.maxCostUsd is a strict cap \(caps are strict by default\), so each LLM call's worst case is held before it starts, but this loop has no llmCallBound: give `llmCallBound` on the loop .*, or set `strict: false` beside `maxCostUsd` to accept an overshoot of at most one LLM response per run in flight$/,
      );
    }
    try {
      new AgentWithStateMachine(agent, { budget: { maxCostUsd: 1 }, logger: false });
    } catch (error) {
      expect(error).toMatchObject({
        argument: 'agent.llmCallBound',
        cap: 'budget.maxCostUsd',
        code: 'invalid_argument',
      });
    }
    const pool = new Budget({ maxCostUsd: 1 }, { label: 'shared budget' });
    expect(() => new AgentWithStateMachine(agent, { sharedBudgets: [pool], logger: false })).toThrow(
      /^sharedBudgets\[0\] \(shared budget\) maxCostUsd is a strict cap/,
    );
    const plain = new AgentWithStateMachine(agent, { logger: false });
    expect(() => plain.setBudget({ maxCostUsd: 1 })).toThrow(/^limits\.maxCostUsd is a strict cap/);
    // `strict: false` accepts the overshoot; caps other than dollars need no bound.
    expect(
      () => new AgentWithStateMachine(agent, { budget: { maxCostUsd: 1, strict: false }, logger: false }),
    ).not.toThrow();
    expect(
      () => new AgentWithStateMachine(agent, { budget: { maxLlmCalls: 3, maxTokens: 9 }, logger: false }),
    ).not.toThrow();
    expect(() => plain.setBudget({ maxCostUsd: 1, strict: false })).not.toThrow();
  });

  it('a turn given a dollar cap of its own is refused before anything runs when the loop cannot bound its calls', async () => {
    const agent = createScriptedAgent({ replies: [reply(10)] });
    const adapter = new AgentWithStateMachine(agent, { logger: false, pricing });
    await expect(adapter.runTurn('hi', { budget: { maxCostUsd: 1 } })).rejects.toThrow(
      /^options\.budget\.maxCostUsd is a strict cap/,
    );
    expect(adapter.machine.history()).toHaveLength(0);
    expect((await adapter.runTurn('hi', { budget: { maxCostUsd: 1, strict: false } })).outcome).toBe('end_of_turn');
  });

  it('strict without maxCostUsd, or not a boolean, is a bad limit', () => {
    expect(() => new Budget({ maxTokens: 5, strict: true })).toThrow(
      'Expected `budget.strict` to be left out unless `maxCostUsd` is set beside it (a strict cap is a dollar cap), got `true` (boolean)',
    );
    expect(() => new Budget({ maxCostUsd: 5, strict: 'yes' as unknown as boolean })).toThrow(
      'Expected `budget.strict` to be true, false or undefined, got `yes` (string)',
    );
  });

  it('a bound that breaks its contract ends the turn naming the bad value', async () => {
    const d = drive(
      { replies: [reply(10)], bound: () => ({ inputTokens: -1, maxOutputTokens: 5 }) },
      { pricing, budget: { maxCostUsd: 1, strict: true } },
    );
    const result = await d.adapter.runTurn('go');
    expect(result.error).toBeInstanceOf(ContractViolationError);
    expect(result.error!.message).toBe(
      'llmCallBound broke its contract: inputTokens must be a non-negative integer, got `-1` (number)',
    );
  });

  it('runs sharing a strict pool hold their worst cases before they start: together they never pass it', async () => {
    const pool = new Budget({ maxCostUsd: 0.012, strict: true }, { label: 'shared budget' });
    // Each call may cost $0.005 and does cost $0.005: two fit, the third is refused before it starts.
    const adapters = [0, 1, 2].map(
      () =>
        new AgentWithStateMachine(
          createScriptedAgent({ replies: [{ ...reply(1000), delayMs: 5 }], bound, sleep: async () => undefined }),
          { pricing, sharedBudgets: [pool], logger: false, minOutputTokens: 1000 },
        ),
    );
    const results = await Promise.all(adapters.map((a) => a.runTurn('go')));
    expect(results.map((r) => r.outcome).sort()).toEqual(['budget_exceeded', 'end_of_turn', 'end_of_turn']);
    expect(pool.usage.costUsd).toBe(0.01);
    expect(pool.held).toBe(0);
  });

  it('charges an attempt that failed after its request may have left at its whole hold; the retry holds again', async () => {
    // The 500 may have been billed: it costs its worst case ($0.005), and the retry's $0.005 fits beside it.
    const d = drive(
      { replies: [{ error: 'HTTP 500' }, reply(100)], bound },
      { pricing, budget: { maxCostUsd: 0.01, strict: true }, retry: { retries: 1, shouldRetry: () => true } },
    );
    const result = await d.adapter.runTurn('go');
    expect(result.outcome).toBe('end_of_turn');
    expect(result.usage.costUsd).toBe(0.0064);
  });

  it('refuses the retry that does not fit beside a failed attempt charged at its hold', async () => {
    const d = drive(
      { replies: [{ error: 'HTTP 500' }, reply(100)], bound },
      { pricing, budget: { maxCostUsd: 0.006, strict: true }, retry: { retries: 1, shouldRetry: () => true } },
    );
    const result = await d.adapter.runTurn('go');
    expect(result.outcome).toBe('budget_exceeded');
    expect(result.usage).toMatchObject({ costUsd: 0.005, llmCalls: 1 });
  });

  it('charges a response whose model has no price at its whole hold, and says why in the journal', async () => {
    const lines: unknown[] = [];
    const d = drive(
      { replies: [{ ...reply(100), model: 'm-2025-01-01' }], bound },
      {
        pricing,
        budget: { maxCostUsd: 1, strict: true },
        journal: true,
        sink: { write: () => undefined, journal: (e: unknown) => void lines.push(e) },
      },
    );
    const result = await d.adapter.runTurn('go');
    expect(result.outcome).toBe('error');
    expect(result.usage.costUsd).toBe(0.005);
    expect(lines.find((l) => (l as { type: string }).type === 'llm')).toMatchObject({
      costUsd: 0.005,
      chargedAtHold: 'charged at its hold: the cost of m-2025-01-01 is unknown',
    });
  });
});

describe('bad numbers in process', () => {
  it('a response reporting 1e308 tokens under a cap is refused with an error naming the value', async () => {
    const d = drive(
      { replies: [{ text: 'x', usage: { inputTokens: 1e308, outputTokens: 1 } }] },
      { pricing, budget: { maxCostUsd: 1, strict: false } },
    );
    const result = await d.adapter.runTurn('go');
    expect(result.outcome).toBe('error');
    expect(result.error!.message).toBe(
      'sendUserMessage broke its contract: reported bad usage: usage.inputTokens must be at most 1000000000 (the stated bound for one response), got 1e+308',
    );
    expect(d.adapter.usage.inputTokens).toBe(0);
  });

  it('NaN, Infinity and negative usage under a cap are refused, each named', async () => {
    for (const [value, shown] of [
      [NaN, '`NaN` (number)'],
      [Infinity, '`Infinity` (number)'],
      [-3, '`-3` (number)'],
    ] as const) {
      const d = drive(
        { replies: [{ text: 'x', usage: { inputTokens: 10, outputTokens: value } }] },
        { pricing, budget: { maxTokens: 1000 } },
      );
      const result = await d.adapter.runTurn('go');
      expect(result.error!.message).toBe(
        `sendUserMessage broke its contract: reported bad usage: usage.outputTokens must be a non-negative number, got ${shown}`,
      );
    }
  });

  it('pricing that answers a huge cost is refused, naming it', async () => {
    const d = drive({ replies: [reply(10)] }, { pricing: () => 1e300, budget: { maxCostUsd: 1, strict: false } });
    const result = await d.adapter.runTurn('go');
    expect(result.error!.message).toBe(
      'pricing failed: returned 1e+300 for model m, expected a non-negative number of USD (at most 10000, the stated bound for one response) or undefined',
    );
  });

  it('a budget charge beyond the stated bound is refused, naming it', () => {
    expect(() => new Budget({}).charge({ costUsd: 1e300 })).toThrow(
      'Expected `delta.costUsd` to be a number of at most 1000000000 (the stated bound), got `1e+300` (number)',
    );
  });
});
