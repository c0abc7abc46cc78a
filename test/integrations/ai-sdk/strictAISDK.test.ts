import { asSchema, tool } from 'ai';
import { z } from 'zod';
import { AgentWithStateMachine, type Pricing } from 'agent-state-machine';
import { fromAISDK } from '../../../lib/integrations/ai-sdk';
import { call, scriptedModel, text } from './scriptedModel';

// $1 per million input tokens, $4 per million output tokens.
const pricing: Pricing = (u) => (u.inputTokens ?? 0) * 1e-6 + (u.outputTokens ?? 0) * 4e-6;
const weather = tool({
  description: 'The weather in a city',
  inputSchema: z.object({ city: z.string() }),
  execute: async ({ city }) => ({ city, celsius: 21 }),
});

describe('fromAISDK under a strict maxCostUsd', () => {
  it('bounds each step (messages, system, tool schemas; callSettings.maxOutputTokens) and lowers the max near the cap', async () => {
    const steps = Array.from({ length: 6 }, (_, i) => ({
      content: [call(`c${i}`, 'weather', { city: 'Oslo' })],
      usage: { input: 300, output: 900 },
    }));
    const model = scriptedModel([...steps, { content: [text('done')] }]);
    const loop = fromAISDK({ model, tools: { weather }, system: 'Be brief.', callSettings: { maxOutputTokens: 1000 } });
    const bound = await loop.llmCallBound!(
      { operation: 'sendUserMessage', message: 'Weather?' },
      { signal: new AbortController().signal, turn: 1 },
    );
    // The serialized request (with the tool's JSON Schema) and the stated overheads, and the max output tokens.
    expect(bound.maxOutputTokens).toBe(1000);
    const schema = await asSchema(weather.inputSchema).jsonSchema;
    const body = {
      system: 'Be brief.',
      messages: [{ role: 'user', content: 'Weather?' }],
      tools: [{ name: 'weather', description: 'The weather in a city', inputSchema: schema }],
    };
    expect(bound.inputTokens).toBe(Buffer.byteLength(JSON.stringify(body)) + 256 + 2 * 16 + 32);
    expect(bound.model).toBe('mock-model');
    const agent = new AgentWithStateMachine(loop, {
      logger: false,
      sleep: () => Promise.resolve(),
      pricing,
      budget: { maxCostUsd: 0.02, strict: true },
    });
    const result = await agent.runTurn('Weather in Oslo, again and again?');
    expect(result.outcome).toBe('budget_exceeded');
    expect(result.usage.costUsd).toBeLessThanOrEqual(0.02);
    const maxes = model.doGenerateCalls.map((c) => c.maxOutputTokens);
    expect(maxes[0]).toBe(1000);
    expect(Math.min(...(maxes as number[]))).toBeLessThan(1000);
    expect(Math.min(...(maxes as number[]))).toBeGreaterThanOrEqual(256);
  });

  it('without callSettings.maxOutputTokens a dollar cap (strict by default) refuses the loop before any step, naming the setting', () => {
    const model = scriptedModel([{ content: [text('hi')] }]);
    for (const budget of [{ maxCostUsd: 1 }, { maxCostUsd: 1, strict: true }])
      expect(() => new AgentWithStateMachine(fromAISDK({ model }), { logger: false, pricing, budget })).toThrow(
        /^budget\.maxCostUsd is a strict cap .*but fromAISDK sets no max output tokens, so a call's output \(and its cost\) has no bound: give `callSettings\.maxOutputTokens` on the loop, or set `strict: false` beside `maxCostUsd`/,
      );
    expect(model.doGenerateCalls).toHaveLength(0);
    // With its max output tokens set, the same loop is taken.
    expect(
      () =>
        new AgentWithStateMachine(fromAISDK({ model, callSettings: { maxOutputTokens: 50 } }), {
          logger: false,
          pricing,
          budget: { maxCostUsd: 1 },
        }),
    ).not.toThrow();
  });
});
