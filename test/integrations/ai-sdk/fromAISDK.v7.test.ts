// AI SDK 7 only: run by the ai7-openai7 jest project (Node 22+), type-checked by tsconfig.v7.json.
// The tests of fromAISDK.test.ts run against AI SDK 7 too; these cover what only 7 has.
import { generateText, tool } from 'ai';
import { z } from 'zod';
import { AgentWithStateMachine, InvalidArgumentError } from 'agent-state-machine';
import { fromAISDK, usageFromAISDK } from '../../../lib/integrations/ai-sdk';
import { call, text } from './scriptedModel';
import { scriptedModelV4 } from './scriptedModel.v7';

const adapter = (loop: ReturnType<typeof fromAISDK>) => new AgentWithStateMachine(loop, { logger: false });
const weather = (log: string[] = []) =>
  tool({
    inputSchema: z.object({ city: z.string() }),
    execute: async ({ city }) => (log.push(city), { city, celsius: 21 }),
  });

describe('fromAISDK on AI SDK 7', () => {
  it('runs a tool turn on a LanguageModelV4, the system prompt first in every prompt', async () => {
    const log: string[] = [];
    const model = scriptedModelV4([
      { content: [call('c1', 'weather', { city: 'Oslo' })] },
      { content: [text('21 °C in Oslo.')] },
    ]);
    expect(model.specificationVersion).toBe('v4');
    const loop = fromAISDK({ model, tools: { weather: weather(log) }, system: 'Be brief.' });
    const result = await adapter(loop).runTurn('Weather in Oslo?');
    expect(result).toMatchObject({ outcome: 'end_of_turn', text: '21 °C in Oslo.' });
    expect(result.usage).toMatchObject({ llmCalls: 2, toolCalls: 1 });
    expect(log).toEqual(['Oslo']);
    expect(model.doGenerateCalls).toHaveLength(2);
    expect(model.prompts.map((p) => p[0])).toEqual([
      { role: 'system', content: 'Be brief.' },
      { role: 'system', content: 'Be brief.' },
    ]);
    expect(loop.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant']);
  });

  it('streams a LanguageModelV4 step', async () => {
    const model = scriptedModelV4([{ content: [text('Hello there.')] }]);
    const deltas: string[] = [];
    const result = await adapter(fromAISDK({ model, stream: { onText: (d) => deltas.push(d) } })).runTurn('Hi');
    expect(result).toMatchObject({ outcome: 'end_of_turn', text: 'Hello there.' });
    expect(deltas.join('')).toBe('Hello there.');
    expect(model.doStreamCalls).toHaveLength(1);
  });

  it('reads the token details from inputTokenDetails and outputTokenDetails, the only place 7 has them', async () => {
    const model = scriptedModelV4([
      {
        content: [text('ok')],
        usage: { input: 120, output: 30, cacheRead: 100, cacheWrite: 7, reasoning: 12 },
        modelId: 'gpt-x-2026',
      },
    ]);
    const response = await fromAISDK({ model }).sendUserMessage('Hi', {
      signal: new AbortController().signal,
      turn: 1,
      attempt: 1,
    });
    expect(response.usage).toEqual({
      inputTokens: 120,
      outputTokens: 30,
      cachedInputTokens: 100,
      cacheWriteTokens: 7,
      reasoningTokens: 12,
    });
    expect(response.model).toBe('gpt-x-2026');

    const { finalStep } = await generateText({
      model: scriptedModelV4([{ content: [text('ok')], usage: { input: 9, output: 4, cacheRead: 5, reasoning: 2 } }]),
      prompt: 'Hi',
      maxRetries: 0,
    });
    // AI SDK 6's flat copies are gone.
    expect(finalStep.usage).not.toHaveProperty('cachedInputTokens');
    expect(finalStep.usage).not.toHaveProperty('reasoningTokens');
    expect(usageFromAISDK(finalStep.usage)).toEqual({
      inputTokens: 9,
      outputTokens: 4,
      cachedInputTokens: 5,
      cacheWriteTokens: undefined,
      reasoningTokens: 2,
    });
  });

  it('rejects by name what would take tool calls out of its hands: a contextSchema, callSettings.toolApproval', () => {
    const model = scriptedModelV4([]);
    const withContext = tool({
      inputSchema: z.object({}),
      contextSchema: z.object({ apiKey: z.string() }),
      execute: async () => 'x',
    });
    expect(() => fromAISDK({ model, tools: { withContext } })).toThrow(InvalidArgumentError);
    expect(() => fromAISDK({ model, tools: { withContext } })).toThrow(
      /`tools.withContext.contextSchema`.*toolsContext/,
    );
    expect(() => fromAISDK({ model, callSettings: { toolApproval: { w: 'denied' } } as never })).toThrow(
      /`callSettings.toolApproval`.*runs every valid call/,
    );
  });
});
