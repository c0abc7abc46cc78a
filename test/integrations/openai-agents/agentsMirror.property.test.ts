// Random Agents SDK runs — responses with tool calls or text, failing tools, model errors the
// SDK retries or not, budgets of every kind, a cancel at a random tool — always leave a history
// that validates with no rejected move, ending in a terminal state with the outcome the run had.
import fc from 'fast-check';
import { Agent, setTracingDisabled, tool } from '@openai/agents';
import { z } from 'zod';
import { validateHistory } from 'agent-state-machine/history';
import { type BudgetLimits } from 'agent-state-machine';
import { agentsMirror } from '../../../lib/integrations/openai-agents';
import { cannedModel, type CannedStep } from './cannedModel';

setTracingDisabled(true);

const TERMINAL = new Set(['EndOfTurn', 'Cancelled', 'BudgetExceeded', 'Error']);

const step: fc.Arbitrary<CannedStep> = fc.oneof(
  fc
    .record({
      calls: fc.array(fc.constantFrom('ok', 'fails', 'cancels'), { minLength: 1, maxLength: 3 }),
      inputTokens: fc.integer({ min: 1, max: 200 }),
    })
    .map(({ calls, inputTokens }) => ({
      calls: calls.map((name, i) => ({ id: `c${i}-${Math.random().toString(36).slice(2, 8)}`, name })),
      inputTokens,
    })),
  fc.constant({ error: new Error('503 overloaded') }),
  fc.constant({ text: 'final' }),
);

const budget: fc.Arbitrary<BudgetLimits> = fc.oneof(
  fc.constant({}),
  fc.integer({ min: 1, max: 4 }).map((n) => ({ maxLlmCalls: n })),
  fc.integer({ min: 1, max: 4 }).map((n) => ({ maxToolCalls: n })),
  fc.integer({ min: 50, max: 600 }).map((n) => ({ maxTokens: n })),
);

describe('AgentsMirror over random runs', () => {
  it('every history validates with no rejected move and ends terminal', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(step, { minLength: 1, maxLength: 6 }),
        budget,
        fc.boolean(),
        fc.boolean(),
        async (steps, limits, retries, stream) => {
          // Ids unique within the script, as a provider's are.
          const script = steps.map((s, n) =>
            'calls' in s && s.calls !== undefined
              ? { ...s, calls: s.calls.map((c, i) => ({ ...c, id: `s${n}c${i}` })) }
              : s,
          );
          const model = cannedModel([...script, { text: 'final' }]);
          const sm = agentsMirror({ logger: false, budget: limits });
          const tools = [
            tool({ name: 'ok', description: 'ok', parameters: z.object({}), execute: async () => 'fine' }),
            tool({
              name: 'fails',
              description: 'fails',
              parameters: z.object({}),
              execute: async () => {
                throw new Error('tool broke');
              },
            }),
            tool({
              name: 'cancels',
              description: 'cancels the run while it runs',
              parameters: z.object({}),
              execute: async () => {
                sm.cancel('random cancel');
                return 'cancelled meanwhile';
              },
            }),
          ];
          const agent = new Agent({
            name: 'random',
            model,
            tools,
            ...(retries
              ? { modelSettings: { retry: { maxRetries: 1, policy: () => true, backoff: { initialDelayMs: 0 } } } }
              : {}),
          });
          let threw = false;
          try {
            if (stream) {
              const result = await sm.run(agent, 'go', { stream: true, maxTurns: 8 });
              for await (const _e of result) void _e;
              await result.completed;
              await new Promise((resolve) => setImmediate(resolve));
            } else await sm.run(agent, 'go', { maxTurns: 8 });
          } catch {
            threw = true;
          }
          await new Promise((resolve) => setImmediate(resolve));
          const history = sm.machine.history();
          expect(validateHistory(history).issues).toEqual([]);
          expect(TERMINAL.has(sm.machine.current)).toBe(true);
          expect(sm.result).toBeDefined();
          if (!threw && sm.result!.outcome !== 'end_of_turn') expect(stream).toBe(true);
          if (sm.result!.outcome === 'end_of_turn') expect(threw).toBe(false);
        },
      ),
      { numRuns: 60 },
    );
  }, 120_000);
});
