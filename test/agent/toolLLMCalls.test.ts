import fc from 'fast-check';
import { AgentWithStateMachine, type AgentLoop, type LLMCallBound, type Pricing } from 'agent-state-machine';

// A tool that calls an LLM makes the call through ctx.llm: the run's budgets hold its worst case
// before it starts and charge it after, as the adapter's own calls. A call they refuse is not
// made, and no further tool of the response starts.

const pricing: Pricing = (u) => (u.inputTokens ?? 0) * 1e-6 + (u.outputTokens ?? 0) * 4e-6;

/** A loop whose every response asks for `perResponse` tool calls; each tool asks a model, billed its bound's input and the output it is allowed. */
function toolLoop(main: LLMCallBound, tool: LLMCallBound, perResponse: number) {
  const billed = { usd: 0, toolCalls: 0 };
  let id = 0;
  const bill = (inputTokens: number, outputTokens: number) => {
    billed.usd += pricing({ inputTokens, outputTokens }, { model: 'm' })!;
    return { inputTokens, outputTokens };
  };
  const respond = (maxOutputTokens: number | undefined) => ({
    toolCalls: Array.from({ length: perResponse }, () => ({ id: `c${++id}`, name: 'ask', input: {} })),
    usage: bill(main.inputTokens, Math.min(main.maxOutputTokens, maxOutputTokens ?? Infinity)),
    model: 'm',
  });
  const loop: AgentLoop = {
    llmCallBound: (_call, ctx) => ({
      ...main,
      maxOutputTokens: Math.min(main.maxOutputTokens, ctx.maxOutputTokens ?? Infinity),
    }),
    sendUserMessage: async (_m, ctx) => respond(ctx.maxOutputTokens),
    sendToolResults: async (_r, _x, ctx) => respond(ctx.maxOutputTokens),
    async runTool(call, ctx) {
      const answer = await ctx.llm!.call(tool, async (c) => {
        billed.toolCalls++;
        return { usage: bill(tool.inputTokens, c.maxOutputTokens ?? tool.maxOutputTokens), model: 'm' };
      });
      return { callId: call.id, output: `asked: ${answer.usage.outputTokens}` };
    },
  };
  return { loop, billed };
}

const bound = (inputMax: number, outputMax: number) =>
  fc.record({
    inputTokens: fc.integer({ min: 1, max: inputMax }),
    maxOutputTokens: fc.integer({ min: 16, max: outputMax }),
    model: fc.constant('m'),
  });

describe("a tool's LLM call through ctx.llm", () => {
  it('never passes a strict cap, whatever the tools ask and how many run at once', async () => {
    await fc.assert(
      fc.asyncProperty(
        bound(4000, 2000),
        bound(8000, 4000),
        fc.integer({ min: 1, max: 4 }),
        fc.integer({ min: 1, max: 3 }),
        fc.integer({ min: 1, max: 200 }).map((n) => n / 1000),
        async (main, tool, perResponse, toolConcurrency, cap) => {
          const { loop, billed } = toolLoop(main, tool, perResponse);
          const agent = new AgentWithStateMachine(loop, {
            logger: false,
            pricing,
            minOutputTokens: 16,
            toolConcurrency,
            budget: { maxCostUsd: cap },
          });
          const result = await agent.runTurn('go');
          expect(result.outcome).toBe('budget_exceeded');
          expect(billed.usd).toBeLessThanOrEqual(cap + 1e-12);
          expect(agent.usage.costUsd).toBeCloseTo(billed.usd, 12);
        },
      ),
      { numRuns: 60 },
    );
  });

  it('a refused call is not made: the tool answers with the refusal, and the tools after it do not start', async () => {
    const main = { inputTokens: 100, maxOutputTokens: 100, model: 'm' };
    const { loop, billed } = toolLoop(main, { inputTokens: 100_000, maxOutputTokens: 100, model: 'm' }, 3);
    const agent = new AgentWithStateMachine(loop, { logger: false, pricing, budget: { maxCostUsd: 0.05 } });
    const result = await agent.runTurn('go');
    expect(billed.toolCalls).toBe(0);
    expect(result.outcome).toBe('budget_exceeded');
    expect(agent.usage.toolCalls).toBe(1);
  });

  it('ctx.llm.call works taken off its handle, in every round of tools', async () => {
    const tool = { inputTokens: 100, maxOutputTokens: 100, model: 'm' };
    let round = 0;
    const loop: AgentLoop = {
      llmCallBound: () => tool,
      sendUserMessage: async () => ({
        toolCalls: [{ id: 'a', name: 'ask', input: {} }],
        usage: { inputTokens: 1, outputTokens: 0 },
      }),
      sendToolResults: async () =>
        ++round < 2
          ? { toolCalls: [{ id: `b${round}`, name: 'ask', input: {} }], usage: { inputTokens: 1, outputTokens: 0 } }
          : { text: 'done', usage: { inputTokens: 1, outputTokens: 0 } },
      async runTool(call, ctx) {
        const { call: ask } = ctx.llm!;
        const answer = await ask(tool, async () => ({ usage: { inputTokens: 100, outputTokens: 7 }, model: 'm' }));
        return { callId: call.id, output: `asked: ${answer.usage.outputTokens}` };
      },
    };
    const agent = new AgentWithStateMachine(loop, { logger: false, pricing, budget: { maxCostUsd: 1 } });
    const result = await agent.runTurn('go');
    expect(result.outcome).toBe('end_of_turn');
    expect(agent.usage.llmCalls).toBe(5);
    expect(agent.usage.outputTokens).toBe(14);
  });
});
