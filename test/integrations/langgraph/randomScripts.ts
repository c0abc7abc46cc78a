// Random ReAct scripts for the LangGraph mirror's property tests: steps that call the tools
// 'ok', 'fails' and 'cancels', fail with a 503, or answer; and budgets of each kind of limit.
import fc from 'fast-check';
import { tool } from '@langchain/core/tools';
import { z } from 'zod';
import type { BudgetLimits } from 'agent-state-machine';
import type { LangGraphMirror } from '../../../lib/integrations/langgraph';
import type { ScriptedStep } from './scriptedChatModel';

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

/** 1–6 steps, each tool call with an id of its own. */
export const scripts: fc.Arbitrary<ScriptedStep[]> = fc
  .array(step, { minLength: 1, maxLength: 6 })
  .map((steps) =>
    steps.map((s, n) =>
      'calls' in s && s.calls !== undefined ? { ...s, calls: s.calls.map((c, i) => ({ ...c, id: `s${n}c${i}` })) } : s,
    ),
  );

/** No limit, or one of calls, tool calls or tokens. */
export const countLimits: readonly fc.Arbitrary<BudgetLimits>[] = [
  fc.constant({}),
  fc.integer({ min: 1, max: 4 }).map((n) => ({ maxLlmCalls: n })),
  fc.integer({ min: 1, max: 4 }).map((n) => ({ maxToolCalls: n })),
  fc.integer({ min: 50, max: 600 }).map((n) => ({ maxTokens: n })),
];

/** The tools the scripts call: 'ok' answers, 'fails' throws, 'cancels' cancels `lg`'s run while it runs. */
export function scriptTools(lg: LangGraphMirror) {
  return [
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
}
