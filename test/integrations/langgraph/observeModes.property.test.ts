// The two places a LangGraphMirror can hear a graph — its callbacks (`observe: 'graph'`) and the
// model and tools it wrapped (`observe: 'wrapped'`) — must make the same run: the same random
// ReAct script (tool calls, failing tools, model errors, a cancel mid-tool, budgets of every
// kind, a strict dollar cap) run once each way, under one clock, leaves byte-identical
// histories, usage and results, and sends the model the same requests.
import fc from 'fast-check';
import { createReactAgent } from '@langchain/langgraph/prebuilt';
import { type BudgetLimits } from 'agent-state-machine';
import { validateHistory } from 'agent-state-machine/history';
import { LangGraphMirror, type LangGraphObserve } from '../../../lib/integrations/langgraph';
import { ScriptedChatModel, type ScriptedStep } from './scriptedChatModel';
import { countLimits, scriptTools, scripts } from './randomScripts';

const budget: fc.Arbitrary<BudgetLimits> = fc.oneof(
  ...countLimits,
  // Strict: each call's worst case (its messages and the 64 max tokens it states) is held first.
  fc.integer({ min: 1, max: 40 }).map((n) => ({ maxCostUsd: n * 1e-4 })),
);

const pricing = (u: { inputTokens?: number; outputTokens?: number }): number =>
  ((u.inputTokens ?? 0) + (u.outputTokens ?? 0) * 4) / 1e6;

async function runOnce(observe: LangGraphObserve, script: ScriptedStep[], limits: BudgetLimits) {
  let t = Date.UTC(2026, 0, 1);
  const lg = new LangGraphMirror({ logger: false, budget: limits, pricing, clock: () => (t += 1), observe });
  const llm = new ScriptedChatModel(script, { maxTokens: 64 });
  const tools = scriptTools(lg);
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
      fc.asyncProperty(scripts, budget, async (steps, limits) => {
        const script = [...steps];
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
