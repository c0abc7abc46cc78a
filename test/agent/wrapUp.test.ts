import {
  AgentWithStateMachine,
  Budget,
  createScriptedAgent,
  DEFAULT_TABLE,
  extendTable,
  InvalidArgumentError,
  WRAP_UP_EXTENSION,
  type LLMCall,
  type Pricing,
  type ScriptedReply,
} from '../../lib/index';
import { DEFAULT_WRAP_UP_INSTRUCTION } from '../../lib/agent/BudgetEndings';
import { BUDGET_RAN_OUT } from '../../lib/agent/endings/finalForms';
import { drive } from '../helpers/drive';
import { markUnbounded } from '../../lib/internal/unboundedLoop';

// $1 per million input tokens, $4 per million output tokens: a call bounded at 1,000 in and
// 1,000 out may cost $0.005.
const pricing: Pricing = (u, { model }) =>
  model === 'm' ? (u.inputTokens ?? 0) * 1e-6 + (u.outputTokens ?? 0) * 4e-6 : undefined;
const bound = { inputTokens: 1000, maxOutputTokens: 1000, model: 'm' };
const TABLE = extendTable(DEFAULT_TABLE, WRAP_UP_EXTENSION);
const tool = (i: number): ScriptedReply => ({
  text: `step ${i}`,
  toolCalls: [{ id: `c${i}`, name: 'look', input: {} }],
  model: 'm',
  usage: { inputTokens: 1000, outputTokens: 1000 },
});
const finalReply: ScriptedReply = {
  text: 'the answer so far',
  model: 'm',
  usage: { inputTokens: 1000, outputTokens: 50 },
};
// Each call's worst case is $0.005; the final call after one is held at 1,000 + 2 × 1,000 + 64
// input tokens and 1,000 output tokens: $0.007064.
const FINAL_CALL_USD = 0.007064;

describe('budget.wrapUp', () => {
  it('ends with the answer of a final call within a strict cap, once the next call would not fit beside its hold', async () => {
    const pool = new Budget({ maxCostUsd: 1, strict: true }, { label: 'pool' });
    const d = drive(
      { replies: [tool(1), tool(2), tool(3), tool(4)], bound, finalReply, tools: { look: { output: 'seen' } } },
      {
        pricing,
        table: TABLE,
        minOutputTokens: 1000,
        sharedBudgets: [pool],
        budget: { maxCostUsd: 0.02, strict: true, wrapUp: true },
      },
    );
    const result = await d.adapter.runTurn('go');
    expect(result.outcome).toBe('wrapped_up');
    expect(result.text).toBe('the answer so far');
    // Two ordinary calls ($0.005 each) and the final one ($0.0012): never past the cap.
    expect(result.usage.costUsd).toBeCloseTo(0.0112, 10);
    expect(result.usage.costUsd).toBeLessThanOrEqual(0.02);
    expect(d.path()).toEqual([
      'WaitingForUserInput',
      'SendingToLLM',
      'ProcessingLLMResponse',
      'ToolUseRequested',
      'CheckingForCancellation',
      'RunningTool',
      'CheckingGitCommits',
      'CheckingBudget',
      'GatheringAdditionalMessages',
      'SendingToolResults',
      'ProcessingLLMResponse',
      'ToolUseRequested',
      'CheckingForCancellation',
      'RunningTool',
      'CheckingGitCommits',
      'CheckingBudget',
      'GatheringAdditionalMessages',
      'SendingToolResults',
      'WrappingUp',
      'EndOfTurn',
    ]);
    const sends = d.agent.calls.filter((c) => c.op === 'sendUserMessage' || c.op === 'sendToolResults');
    expect(sends.map((c) => ('wrapUp' in c ? c.wrapUp : undefined))).toEqual([
      undefined,
      undefined,
      DEFAULT_WRAP_UP_INSTRUCTION,
    ]);
    // The real results fitted: the final call carries them.
    expect(sends[2]).toMatchObject({ op: 'sendToolResults', results: [{ callId: 'c2', output: 'seen' }] });
    const history = d.adapter.machine.history();
    const wrapping = history.find((r) => (r.to as string) === 'WrappingUp')!;
    expect(wrapping.data).toMatchObject({ finalCallUsd: FINAL_CALL_USD, nextCallUsd: 0.005 });
    expect(history.at(-1)!.data).toMatchObject({ outcome: 'wrapped_up', answer: 'the answer so far' });
    // Nothing stays held once the run has ended.
    expect(pool.held).toBe(0);
    expect(d.rejected).toEqual([]);
  });

  it('answers the tool calls left open with budget-ran-out results when the real ones would not fit', async () => {
    // A request grows by the length of the results it carries.
    const grows = (call: LLMCall) => ({
      ...bound,
      inputTokens:
        1000 + (call.operation === 'sendToolResults' ? call.results.reduce((n, r) => n + r.output.length, 0) : 0),
    });
    const d = drive(
      {
        replies: [tool(1), tool(2)],
        bound: grows,
        finalReply,
        tools: { look: { output: 'x'.repeat(20_000) } },
      },
      { pricing, table: TABLE, minOutputTokens: 1000, budget: { maxCostUsd: 0.0125, strict: true, wrapUp: true } },
    );
    const result = await d.adapter.runTurn('go');
    expect(result.outcome).toBe('wrapped_up');
    expect(result.usage.costUsd).toBeLessThanOrEqual(0.0125);
    const last = d.agent.calls.filter((c) => c.op === 'sendToolResults').at(-1)!;
    expect(last).toMatchObject({
      wrapUp: DEFAULT_WRAP_UP_INSTRUCTION,
      results: [{ callId: 'c1', output: BUDGET_RAN_OUT, isError: true }],
      messages: [],
    });
  });

  it('wraps up at the first call when even it does not fit beside the hold, with the user message', async () => {
    const d = drive(
      { replies: [tool(1)], bound, finalReply },
      {
        pricing,
        table: TABLE,
        minOutputTokens: 1000,
        budget: { maxCostUsd: 0.011, strict: true, wrapUp: { instruction: 'Answer now.' } },
      },
    );
    const result = await d.adapter.runTurn('go');
    expect(result.outcome).toBe('wrapped_up');
    expect(d.agent.calls.filter((c) => c.op === 'sendUserMessage')).toEqual([
      { op: 'sendUserMessage', message: 'go', attempt: 1, wrapUp: 'Answer now.' },
    ]);
  });

  it('holds finalCallUsd in place of the computed worst case', async () => {
    const d = drive(
      { replies: [tool(1), tool(2), tool(3)], bound, finalReply, tools: { look: { output: 'seen' } } },
      {
        pricing,
        table: TABLE,
        minOutputTokens: 1000,
        budget: { maxCostUsd: 0.0155, strict: true, wrapUp: { finalCallUsd: 0.0055 } },
      },
    );
    const result = await d.adapter.runTurn('go');
    expect(result.outcome).toBe('wrapped_up');
    // $0.0155 − $0.0055 leaves room for two calls of $0.005 worst case.
    expect(d.agent.calls.filter((c) => c.op === 'sendToolResults' && !('wrapUp' in c))).toHaveLength(1);
    expect(d.adapter.machine.history().find((r) => (r.to as string) === 'WrappingUp')!.data).toMatchObject({
      finalCallUsd: 0.0055,
    });
  });

  it('works under a cap that is not strict, by a check before each call', async () => {
    const d = drive(
      { replies: [tool(1), tool(2), tool(3), tool(4)], bound, finalReply, tools: { look: { output: 'seen' } } },
      { pricing, table: TABLE, budget: { maxCostUsd: 0.02, wrapUp: true } },
    );
    const result = await d.adapter.runTurn('go');
    expect(result.outcome).toBe('wrapped_up');
    expect(result.usage.costUsd).toBeLessThanOrEqual(0.02);
    expect(result.text).toBe('the answer so far');
  });

  it('ends budget_exceeded, not past the cap, when a response passed its bound: no final call is made on a bound that cannot be trusted', async () => {
    // The final call (1,000 in, 1,000 out: $0.005) fits at the start, but a too-low bound let
    // the first call cost more than its worst case ($0.009 of $0.0121): a strict cap then stops.
    const d = drive(
      {
        replies: [{ ...tool(1), usage: { inputTokens: 1000, outputTokens: 2000 } }],
        bound,
        finalReply,
        tools: { look: { output: 'seen' } },
      },
      { pricing, table: TABLE, minOutputTokens: 1000, budget: { maxCostUsd: 0.0121, strict: true, wrapUp: true } },
    );
    const result = await d.adapter.runTurn('go');
    expect(result.outcome).toBe('budget_exceeded');
    expect(result.error?.message).toMatch(/past its bound/);
    expect(d.path()).not.toContain('WrappingUp');
    expect(result.usage.costUsd).toBeLessThanOrEqual(0.0121);
    expect(d.agent.calls.filter((c) => c.op === 'sendToolResults')).toEqual([]);
  });
});

describe('budget.wrapUp refused where it cannot be honoured', () => {
  it('refuses a loop that does not honour ctx.wrapUp, by name', () => {
    const agent = { ...createScriptedAgent({ replies: [], bound }), honours: {} };
    expect(
      () =>
        new AgentWithStateMachine(agent, {
          pricing,
          table: TABLE,
          logger: false,
          budget: { maxCostUsd: 1, wrapUp: true },
        }),
    ).toThrow(
      'Expected `budget.wrapUp` to be left out for a loop that does not say it makes the final call the budget asks for: ' +
        'when `ctx.wrapUp` is set, send that call with no tools and the instruction `ctx.wrapUp` holds as its last user message, then set ' +
        '`honours: { wrapUp: true }` on your loop (the ready-made loops do)',
    );
  });

  it('refuses an external dollar cap beside it, which would hold no final call', () => {
    const agent = createScriptedAgent({ replies: [], bound });
    const external = { capsCost: true, reserve: async () => undefined, charge: async () => undefined };
    expect(
      () =>
        new AgentWithStateMachine(agent, {
          pricing,
          table: TABLE,
          logger: false,
          externalBudgets: [external],
          budget: { maxCostUsd: 1, wrapUp: true },
        }),
    ).toThrow(/Expected `externalBudgets\[0\]` to be left out beside budget\.wrapUp/);
  });

  it('brings WRAP_UP_EXTENSION when no table is given, and refuses a given table without it, naming it', () => {
    const agent = createScriptedAgent({ replies: [], bound });
    const budget = { maxCostUsd: 1, wrapUp: true as const };
    expect(new AgentWithStateMachine(agent, { pricing, logger: false, budget }).machine.table.states).toHaveProperty(
      'WrappingUp',
    );
    expect(() => new AgentWithStateMachine(agent, { pricing, logger: false, table: DEFAULT_TABLE, budget })).toThrow(
      /^`budget\.wrapUp` needs the states and edges of WRAP_UP_EXTENSION, which `table` lacks \(SendingToLLM → WrappingUp,.*\): pass table: extendTable\(yourTable, WRAP_UP_EXTENSION\), or leave `table` out/,
    );
  });

  it('refuses, with strict: false too, a ready-made loop whose requests ask for no max output tokens', () => {
    const agent = markUnbounded(createScriptedAgent({ replies: [], bound }), {
      setting: 'options.maxTokens',
      remedy: '`maxTokens` on the loop',
      why: 'fromOpenAIChat sets no max output tokens',
    });
    const budget = { maxCostUsd: 1, strict: false, wrapUp: true as const };
    expect(() => new AgentWithStateMachine(agent, { pricing, logger: false, budget })).toThrow(
      "Expected `options.maxTokens` to be set, since budget.wrapUp is set: the final call's worst case is held before each call, strict cap or not, but fromOpenAIChat sets no max output tokens (give `maxTokens` on the loop), got `undefined`",
    );
  });

  it('refuses a cap the final call could never fit in, with the figures', () => {
    const agent = createScriptedAgent({ replies: [], bound });
    expect(
      () =>
        new AgentWithStateMachine(agent, {
          pricing,
          table: TABLE,
          logger: false,
          budget: { maxCostUsd: 0.004, strict: true, wrapUp: true },
        }),
    ).toThrow(
      'Expected `budget.maxCostUsd` to be room for the final call of budget.wrapUp: its worst case is $0.0050, and $0.0040 of $0.0040 is left, got `0.004` (number)',
    );
    expect(
      () =>
        new AgentWithStateMachine(agent, {
          pricing,
          table: TABLE,
          logger: false,
          budget: { maxCostUsd: 0.004, wrapUp: { finalCallUsd: 0.005 } },
        }),
    ).toThrow(/Expected `budget\.wrapUp\.finalCallUsd` to be at most `budget\.maxCostUsd` \(0\.004\)/);
  });

  it('refuses wrapUp without maxCostUsd, and malformed shapes', () => {
    const agent = createScriptedAgent({ replies: [], bound });
    const make = (budget: unknown) => () =>
      new AgentWithStateMachine(agent, { pricing, table: TABLE, logger: false, budget: budget as never });
    expect(make({ wrapUp: true })).toThrow(/`budget\.wrapUp` to be left out unless `maxCostUsd` is set beside it/);
    expect(make({ maxCostUsd: 1, wrapUp: 'yes' })).toThrow(InvalidArgumentError);
    expect(make({ maxCostUsd: 1, wrapUp: { reserve: 1 } })).toThrow(/budget\.wrapUp\.reserve/);
    // The old spelling is named with the new one, not taken as a hold of 0.
    expect(make({ maxCostUsd: 1, wrapUp: { reserveUsd: 0.5 } })).toThrow(
      'Expected `budget.wrapUp.reserveUsd` to be left out: `reserveUsd` is now `finalCallUsd`, got `0.5` (number)',
    );
    expect(make({ maxCostUsd: 1, wrapUp: { instruction: '' } })).toThrow(/budget\.wrapUp\.instruction/);
    expect(make({ maxCostUsd: 1, visible: 'yes' })).toThrow(/budget\.visible/);
  });
});

describe('budget.visible', () => {
  it('gives each call a note of what is left, counted in its bound', async () => {
    const seen: Array<string | undefined> = [];
    const d = drive(
      {
        replies: [tool(1), { text: 'done', model: 'm', usage: { inputTokens: 1000, outputTokens: 10 } }],
        bound: (_call, ctx) => {
          seen.push(ctx.budgetNote);
          return { ...bound, inputTokens: 1000 + (ctx.budgetNote?.length ?? 0) };
        },
        tools: { look: { output: 'seen' } },
      },
      { pricing, budget: { maxCostUsd: 0.05, maxLlmCalls: 10, strict: true, visible: true } },
    );
    const result = await d.adapter.runTurn('go');
    expect(result.outcome).toBe('end_of_turn');
    const sends = d.agent.calls.filter((c) => c.op === 'sendUserMessage' || c.op === 'sendToolResults');
    expect(sends.map((c) => ('budgetNote' in c ? c.budgetNote : undefined))).toEqual([
      'Budget left: $0.0500 of $0.0500 cost, 10 of 10 LLM calls.',
      'Budget left: $0.0450 of $0.0500 cost, 9 of 10 LLM calls.',
    ]);
    // The bound was asked with the note the call carried.
    expect(seen).toEqual(sends.map((c) => ('budgetNote' in c ? c.budgetNote : undefined)));
  });

  it('refuses a loop that does not honour ctx.budgetNote', () => {
    const agent = { ...createScriptedAgent({ replies: [] }), honours: { wrapUp: true } };
    expect(() => new AgentWithStateMachine(agent, { logger: false, budget: { visible: true } })).toThrow(
      'Expected `budget.visible` to be left out for a loop that does not say it adds the budget note to its requests: ' +
        'add `ctx.budgetNote` to each request your loop sends and count it in `llmCallBound`, then set ' +
        '`honours: { budgetNote: true }` on it (the ready-made loops do)',
    );
  });
});
