import fc from 'fast-check';
import { generateText, stepCountIs, tool } from 'ai';
import { z } from 'zod';
import { AgentWithStateMachine, Budget } from 'agent-state-machine';
import { budgetFor, fromAISDK } from '../../../lib/integrations/ai-sdk';
import { call, scriptedModel, text, type Step } from './scriptedModel';

/** One requested call: valid, with input that fails the schema, or naming no tool. */
const callArb = fc.constantFrom('valid', 'bad input', 'no such tool', 'bad json');
const stepsArb = fc.array(fc.array(callArb, { minLength: 1, maxLength: 4 }), { maxLength: 5 });

function script(steps: string[][]): { steps: Step[]; valid: number } {
  let n = 0;
  let valid = 0;
  const out: Step[] = steps.map((kinds) => ({
    content: kinds.map((kind) => {
      const id = `c${(n += 1)}`;
      if (kind === 'valid') valid += 1;
      if (kind === 'bad json') return call(id, 'add', '{"a": 1,');
      return call(
        id,
        kind === 'no such tool' ? 'subtract' : 'add',
        kind === 'bad input' ? { a: 'one' } : { a: n, b: 1 },
      );
    }),
  }));
  out.push({ content: [text('done')] });
  return { steps: out, valid };
}

describe('fromAISDK (properties)', () => {
  it('answers every requested call exactly once and executes exactly the valid ones', async () => {
    await fc.assert(
      fc.asyncProperty(stepsArb, async (steps) => {
        const { steps: scripted, valid } = script(steps);
        const model = scriptedModel(scripted);
        let executed = 0;
        const add = tool({
          inputSchema: z.object({ a: z.number(), b: z.number() }),
          execute: async ({ a, b }) => ((executed += 1), a + b),
        });
        const loop = fromAISDK({ model, tools: { add } });
        const result = await new AgentWithStateMachine(loop, { logger: false }).runTurn('go');
        expect(result.outcome).toBe('end_of_turn');
        expect(executed).toBe(valid);
        // The scripted model rejects (400) any prompt with a call unanswered or answered twice;
        // the conversation kept by the loop must pass the same check.
        const calls = loop.messages.flatMap((m) =>
          m.role === 'assistant' && Array.isArray(m.content)
            ? m.content.flatMap((p) => (p.type === 'tool-call' ? [p.toolCallId] : []))
            : [],
        );
        const answers = loop.messages.flatMap((m) =>
          m.role === 'tool' ? m.content.flatMap((p) => (p.type === 'tool-result' ? [p.toolCallId] : [])) : [],
        );
        expect(answers).toEqual(calls);
        expect(calls).toHaveLength(steps.flat().length);
      }),
      { numRuns: 40 },
    );
  });
});

describe('budgetFor (properties)', () => {
  it('never lets LLM or tool calls pass their caps, whatever the model asks for', async () => {
    await fc.assert(
      fc.asyncProperty(
        stepsArb,
        fc.integer({ min: 0, max: 4 }),
        fc.integer({ min: 0, max: 6 }),
        async (steps, maxLlmCalls, maxToolCalls) => {
          const { steps: scripted } = script(steps);
          const model = scriptedModel(scripted);
          let executed = 0;
          const add = tool({
            inputSchema: z.object({ a: z.number(), b: z.number() }),
            execute: async ({ a, b }) => ((executed += 1), a + b),
          });
          const budget = new Budget({ maxLlmCalls, maxToolCalls });
          const guard = budgetFor(budget);
          await generateText({
            model,
            tools: guard.wrapTools({ add }),
            prompt: 'go',
            maxRetries: 0,
            ...guard,
            stopWhen: [stepCountIs(20), guard.stopWhen],
          }).catch(() => undefined);
          expect(model.prompts.length).toBeLessThanOrEqual(maxLlmCalls);
          expect(budget.usage.llmCalls).toBe(model.prompts.length);
          expect(executed).toBeLessThanOrEqual(maxToolCalls);
          expect(budget.usage.toolCalls).toBe(executed);
        },
      ),
      { numRuns: 60 },
    );
  });
});
