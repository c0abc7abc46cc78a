// The two places a LangGraphMirror can hear a graph — its callbacks (`observe: 'graph'`) and the
// model and tools it wrapped (`observe: 'wrapped'`) — must make the same run: the same random
// ReAct script (tool calls, failing tools, model errors, a cancel mid-tool, budgets of every
// kind, a strict dollar cap) run once each way, under one clock, leaves byte-identical
// histories, usage and results, and sends the model the same requests.
import fc from 'fast-check';
import { tool } from '@langchain/core/tools';
import { createReactAgent } from '@langchain/langgraph/prebuilt';
import { z } from 'zod';
import { type BudgetLimits } from 'agent-state-machine';
import { validateHistory } from 'agent-state-machine/history';
import { LangGraphMirror, type LangGraphObserve } from '../../../lib/integrations/langgraph';
import { ScriptedChatModel, type ScriptedStep } from './scriptedChatModel';

const step: fc.Arbitrary<ScriptedStep> = fc.oneof(
  fc
    .record({
      calls: fc.array(fc.constantFrom('ok', 'fails', 'cancels'), { minLength: 1, maxLength: 3 }),
      inputTokens: fc.integer({ min: 1, max: 200 }),
    })
    .map(({ calls, inputTokens }) => ({ calls: calls.map((name) => ({ id: '', name })), inputTokens })),
  fc.constant({ error: new Error('503 overloaded') }),
  fc.constant({ text: 'final' }),
);

const budget: fc.Arbitrary<BudgetLimits> = fc.oneof(
  fc.constant({}),
  fc.integer({ min: 1, max: 4 }).map((n) => ({ maxLlmCalls: n })),
  fc.integer({ min: 1, max: 4 }).map((n) => ({ maxToolCalls: n })),
  fc.integer({ min: 50, max: 600 }).map((n) => ({ maxTokens: n })),
  // Strict: each call's worst case (its messages and the 64 max tokens it states) is held first.
  fc.integer({ min: 1, max: 40 }).map((n) => ({ maxCostUsd: n * 1e-4 })),
);

const pricing = (u: { inputTokens?: number; outputTokens?: number }): number =>
  ((u.inputTokens ?? 0) + (u.outputTokens ?? 0) * 4) / 1e6;

async function runOnce(observe: LangGraphObserve, script: ScriptedStep[], limits: BudgetLimits) {
  let t = Date.UTC(2026, 0, 1);
  const lg = new LangGraphMirror({ logger: false, budget: limits, pricing, clock: () => (t += 1), observe });
  const llm = new ScriptedChatModel(script, { maxTokens: 64 });
  const tools = [
    tool(async () => 'fine', { name: 'ok', description: 'ok', schema: z.object({}) }),
    tool(
      async () => {
        throw new Error('tool broke');
      },
      { name: 'fails', description: 'fails', schema: z.object({}) },
    ),
    tool(
      async () => {
        lg.cancel('random cancel');
        return 'cancelled meanwhile';
      },
      { name: 'cancels', description: 'cancels the run while it runs', schema: z.object({}) },
    ),
  ];
  // Wrapped both ways: observing 'graph', the wrappers only serve a resumed run's calls.
  const agent = createReactAgent({ llm: lg.wrapModel(llm), tools: lg.wrapTools(tools) });
  const failure = await lg.run(agent, { messages: [{ role: 'user', content: 'go' }] }, { recursionLimit: 12 }).then(
    () => undefined,
    (e: unknown) => (e as Error).message,
  );
  return {
    history: JSON.stringify(lg.machine.history()),
    usage: lg.usage,
    result: { outcome: lg.result?.outcome, text: lg.result?.text, error: lg.result?.error?.message },
    failure,
    requests: llm.requests.length,
    valid: validateHistory(lg.machine.history()).issues,
  };
}

beforeEach(() => jest.spyOn(console, 'error').mockImplementation(() => undefined));
afterEach(() => jest.restoreAllMocks());

describe("LangGraphMirror observing 'graph' and 'wrapped'", () => {
  it('makes the same run of the same random script: history, usage, result and requests', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 6 }), budget, async (steps, limits) => {
        const script = steps.map((s, n) =>
          'calls' in s && s.calls !== undefined
            ? { ...s, calls: s.calls.map((c, i) => ({ ...c, id: `s${n}c${i}` })) }
            : s,
        );
        script.push({ text: 'final' });
        const graph = await runOnce('graph', script, limits);
        const wrapped = await runOnce('wrapped', script, limits);
        expect(graph.valid).toEqual([]);
        expect(wrapped).toEqual(graph);
      }),
      { numRuns: 60, seed: 40_2026 },
    );
  }, 120_000);
});
