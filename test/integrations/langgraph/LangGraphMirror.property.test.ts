// Random LangGraph ReAct runs — responses with tool calls or text, failing tools, model errors a
// node's retryPolicy retries or not, budgets of every kind, a cancel at a random tool — always
// leave a history that validates with no rejected move, ending in a terminal state.
import fc from 'fast-check';
import { createReactAgent } from '@langchain/langgraph/prebuilt';
import { validateHistory } from 'agent-state-machine/history';
import { type BudgetLimits } from 'agent-state-machine';
import { langGraphMirror } from '../../../lib/integrations/langgraph';
import { ScriptedChatModel } from './scriptedChatModel';
import { countLimits, scriptTools, scripts } from './randomScripts';

const TERMINAL = new Set(['EndOfTurn', 'Cancelled', 'BudgetExceeded', 'Error']);

const budget: fc.Arbitrary<BudgetLimits> = fc.oneof(...countLimits);

beforeEach(() => jest.spyOn(console, 'error').mockImplementation(() => undefined));
afterEach(() => jest.restoreAllMocks());

describe('LangGraphMirror over random runs', () => {
  it('every history validates with no rejected move and ends terminal', async () => {
    await fc.assert(
      fc.asyncProperty(scripts, budget, async (steps, limits) => {
        const script = [...steps];
        const llm = new ScriptedChatModel([...script, { text: 'final' }]);
        const lg = langGraphMirror({ logger: false, budget: limits });
        const tools = scriptTools(lg);
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
