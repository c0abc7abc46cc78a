// Random LangGraph ReAct runs — responses with tool calls or text, failing tools, model errors a
// node's retryPolicy retries or not, budgets of every kind, a cancel at a random tool — always
// leave a history that validates with no rejected move, ending in a terminal state.
import fc from 'fast-check';
import { tool } from '@langchain/core/tools';
import { createReactAgent } from '@langchain/langgraph/prebuilt';
import { z } from 'zod';
import { validateHistory } from 'agent-state-machine/history';
import { type BudgetLimits } from 'agent-state-machine';
import { langGraphMirror } from '../../../lib/integrations/langgraph';
import { ScriptedChatModel, type ScriptedStep } from './scriptedChatModel';

const TERMINAL = new Set(['EndOfTurn', 'Cancelled', 'BudgetExceeded', 'Error']);

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
);

beforeEach(() => jest.spyOn(console, 'error').mockImplementation(() => undefined));
afterEach(() => jest.restoreAllMocks());

describe('LangGraphMirror over random runs', () => {
  it('every history validates with no rejected move and ends terminal', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 6 }), budget, async (steps, limits) => {
        const script = steps.map((s, n) =>
          'calls' in s && s.calls !== undefined
            ? { ...s, calls: s.calls.map((c, i) => ({ ...c, id: `s${n}c${i}` })) }
            : s,
        );
        const llm = new ScriptedChatModel([...script, { text: 'final' }]);
        const lg = langGraphMirror({ logger: false, budget: limits });
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
        const agent = createReactAgent({ llm, tools });
        await lg
          .run(agent, { messages: [{ role: 'user', content: 'go' }] }, { recursionLimit: 12 })
          .catch(() => undefined);
        const history = lg.machine.history();
        expect(validateHistory(history).issues).toEqual([]);
        expect(TERMINAL.has(lg.machine.current)).toBe(true);
        expect(lg.result).toBeDefined();
      }),
      { numRuns: 40 },
    );
  }, 120_000);
});
