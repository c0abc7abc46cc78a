import { tool } from 'ai';
import { z } from 'zod';
import {
  AgentWithStateMachine,
  DEFAULT_TABLE,
  extendTable,
  WRAP_UP_EXTENSION,
  type Pricing,
} from 'agent-state-machine';
import { DEFAULT_WRAP_UP_INSTRUCTION } from '../../../lib/agent/BudgetEndings';
import { fromAISDK } from '../../../lib/integrations/ai-sdk';
import { call, scriptedModel, text } from './scriptedModel';

// $1 per million input tokens, $4 per million output tokens.
const pricing: Pricing = (u) => (u.inputTokens ?? 0) * 1e-6 + (u.outputTokens ?? 0) * 4e-6;
const weather = tool({
  description: 'The weather in a city',
  inputSchema: z.object({ city: z.string() }),
  execute: async ({ city }) => ({ city, celsius: 21 }),
});

describe('fromAISDK with budget.wrapUp and budget.visible', () => {
  it('makes the final call with toolChoice none and the instruction last, each step with the budget note', async () => {
    // Four steps ($0.0039 each) fit beside the final call's hold; the fifth does not. The
    // model answers the final call with text (the SDK itself refuses a tool call under toolChoice none).
    const steps = Array.from({ length: 4 }, (_, i) => ({
      content: [text('Oslo is mild so far.'), call(`c${i}`, 'weather', { city: 'Oslo' })],
      usage: { input: 300, output: 900 },
    }));
    const model = scriptedModel([...steps, { content: [text('Mild: 21 °C.')], usage: { input: 400, output: 20 } }]);
    const loop = fromAISDK({ model, tools: { weather }, system: 'Be brief.', callSettings: { maxOutputTokens: 1000 } });
    const agent = new AgentWithStateMachine(loop, {
      logger: false,
      sleep: () => Promise.resolve(),
      pricing,
      table: extendTable(DEFAULT_TABLE, WRAP_UP_EXTENSION),
      minOutputTokens: 1000,
      budget: { maxCostUsd: 0.03, strict: true, wrapUp: true, visible: true },
    });
    const result = await agent.runTurn('Weather in Oslo, again and again?');
    expect(result.outcome).toBe('wrapped_up');
    expect(result.text).toBe('Mild: 21 °C.');
    expect(result.usage.costUsd).toBeLessThanOrEqual(0.03);
    const calls = model.doGenerateCalls;
    expect(calls).toHaveLength(5);
    expect(calls.slice(0, -1).every((c) => c.toolChoice?.type !== 'none')).toBe(true);
    expect(calls.at(-1)!.toolChoice).toEqual({ type: 'none' });
    const userTexts = (prompt: (typeof model.prompts)[number]) =>
      prompt
        .filter((m) => m.role === 'user')
        .map((m) => (m.content as Array<{ type: string; text?: string }>).map((p) => p.text ?? '').join(''));
    const last = userTexts(model.prompts.at(-1)!);
    // The instruction, then the note that rides on this request alone.
    expect(last.at(-2)).toBe(DEFAULT_WRAP_UP_INSTRUCTION);
    expect(last.at(-1)).toMatch(/^Budget left: \$0\.0\d+ of \$0\.0300 cost\.$/);
    // A note is never kept: each request carries one, the last of its user messages.
    for (const prompt of model.prompts)
      expect(userTexts(prompt).filter((t) => t.startsWith('Budget left:'))).toHaveLength(1);
  });
});
