import fc from 'fast-check';
import { TRANSITIONS, type ScriptedReply, type TurnOutcome } from '../lib/index';
import { drive } from './helpers/drive';

// Tools: `ok` works, `fail` throws, `cancel` cancels the turn mid-tool, `tick` takes 700 ms.
const toolName = fc.constantFrom('ok', 'fail', 'cancel', 'tick');
const usageArb = fc.record({ inputTokens: fc.nat(500), outputTokens: fc.nat(500), costUsd: fc.integer({ min: 0, max: 30 }).map((c) => c / 100) });
const replyArb: fc.Arbitrary<ScriptedReply> = fc.oneof(
  { weight: 3, arbitrary: fc.record({ text: fc.string(), usage: usageArb }) },
  {
    weight: 5,
    arbitrary: fc.record({ toolCalls: fc.array(toolName, { minLength: 1, maxLength: 3 }), usage: usageArb }).map(({ toolCalls, usage }) => ({
      usage,
      toolCalls: toolCalls.map((name, i) => ({ id: `call-${i}`, name })),
    })),
  },
  { weight: 1, arbitrary: fc.constant({ error: 'transient LLM failure' }) },
);
const budgetArb = fc.option(
  fc.record({ maxCostUsd: fc.integer({ min: 0, max: 100 }).map((c) => c / 100), maxToolCalls: fc.nat(8), maxLlmCalls: fc.nat(10), maxWallMs: fc.nat(5000) }, { requiredKeys: [] }),
  { nil: undefined },
);

/** Which terminal state (or Error standing in for it before any call) each outcome may end in. */
const ENDS: Record<TurnOutcome, string[]> = {
  end_of_turn: ['EndOfTurn'],
  cancelled: ['Cancelled', 'Error'],
  budget_exceeded: ['BudgetExceeded', 'Error'],
  error: ['Error'],
};

describe('AgentWithStateMachine with random scripted agents (property-based)', () => {
  it('never asks for an illegal move, ends every turn in a terminal state, and meters exactly what was reported', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(replyArb, { maxLength: 12 }), budgetArb, fc.integer({ min: 0, max: 2 }), fc.integer({ min: 1, max: 4 }), async (replies, budget, retries, turns) => {
        const d = drive(
          {
            replies,
            tools: {
              ok: { output: 'ok' },
              fail: { error: 'tool failed' },
              cancel: (call) => (d.adapter.cancel('random cancel'), { callId: call.id, output: 'done' }),
              tick: (call) => (d.clock.advance(700), { callId: call.id, output: 'slow' }),
            },
            commits: [['c0'], [], ['c1', 'c2']],
            formatterMessages: ['formatted'],
          },
          { ...(budget === undefined ? {} : { budget }), retry: { retries, baseDelayMs: 1 } },
        );
        const turnUsage = { costUsd: 0, inputTokens: 0, outputTokens: 0, llmCalls: 0, toolCalls: 0 };
        for (let t = 0; t < turns; t++) {
          const result = await d.adapter.runTurn(`turn ${t}`);
          expect(d.adapter.machine.isInTerminalState()).toBe(true);
          expect(ENDS[result.outcome]).toContain(d.adapter.machine.current);
          if (result.outcome !== 'end_of_turn') expect(result.error).toBeInstanceOf(Error);
          turnUsage.costUsd += result.usage.costUsd;
          turnUsage.inputTokens += result.usage.inputTokens;
          turnUsage.outputTokens += result.usage.outputTokens;
          turnUsage.llmCalls += result.usage.llmCalls;
          turnUsage.toolCalls += result.usage.toolCalls;
        }
        expect(d.rejected).toEqual([]);

        // Every non-forced move is in the table; forced ones only cancel.
        const history = d.adapter.machine.history();
        history.forEach((r, i) => {
          if (i > 0) expect(r.from).toBe(history[i - 1]!.to);
          if (r.forced) expect(r.to).toBe('Cancelled');
          else expect(TRANSITIONS[r.from]).toContain(r.to);
        });

        // Usage = the sum of what the consumed replies reported, and of the turns' own usage.
        const llmCalls = d.agent.calls.filter((c) => c.op === 'sendUserMessage' || c.op === 'sendToolResults').length;
        const answered = replies.slice(0, llmCalls).filter((r) => r.error === undefined);
        const sum = (key: 'inputTokens' | 'outputTokens' | 'costUsd') => answered.reduce((a, r) => a + (r.usage?.[key] ?? 0), 0);
        const usage = d.adapter.usage;
        expect(usage.llmCalls).toBe(llmCalls);
        expect(usage.toolCalls).toBe(d.agent.calls.filter((c) => c.op === 'runTool').length);
        expect(usage.inputTokens).toBe(sum('inputTokens'));
        expect(usage.outputTokens).toBe(sum('outputTokens'));
        expect(usage.costUsd).toBeCloseTo(sum('costUsd'), 8);
        expect(turnUsage.llmCalls).toBe(usage.llmCalls);
        expect(turnUsage.toolCalls).toBe(usage.toolCalls);
        expect(turnUsage.costUsd).toBeCloseTo(usage.costUsd, 8);

        // A spent budget starts nothing more: at most one LLM call past the limit.
        if (budget?.maxLlmCalls !== undefined) expect(usage.llmCalls).toBeLessThanOrEqual(budget.maxLlmCalls);
        if (budget?.maxToolCalls !== undefined) expect(usage.toolCalls).toBeLessThanOrEqual(budget.maxToolCalls);
      }),
      { numRuns: 400 },
    );
  });
});
