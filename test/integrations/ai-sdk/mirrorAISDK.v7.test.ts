// AI SDK 7 only (type-checked by tsconfig.v7.json, run by the ai7-openai7 jest project).
import { generateText, isStepCount, tool, ToolLoopAgent } from 'ai';
import { z } from 'zod';
import { validateHistory } from 'agent-state-machine/history';
import { type Pricing } from 'agent-state-machine';
import { mirrorAISDK } from '../../../lib/integrations/ai-sdk';
import { call, text } from './scriptedModel';
import { scriptedModelV4 } from './scriptedModel.v7';

const pricing: Pricing = (u) => ((u.inputTokens ?? 0) * 10 + (u.outputTokens ?? 0) * 20) / 1e6;
const ping = tool({ inputSchema: z.object({}), execute: async () => 'pong' });

describe('mirrorAISDK on AI SDK 7 (LanguageModelV4)', () => {
  it('mirrors a V4 model round trip, with the caller’s own stop condition beside the mirror’s', async () => {
    const model = scriptedModelV4([
      { content: [call('c1', 'ping', {})], usage: { input: 1000, output: 500 } },
      { content: [text('done')], usage: { input: 1000, output: 500 } },
    ]);
    const m = mirrorAISDK({ model, tools: { ping }, pricing, logger: false });
    const result = await generateText({ ...m.settings, stopWhen: [isStepCount(5), m.stopWhen], prompt: 'go' });
    expect(result.text).toBe('done');
    expect(m.result).toMatchObject({ outcome: 'end_of_turn', usage: { llmCalls: 2, toolCalls: 1, costUsd: 0.04 } });
    expect(validateHistory(m.mirror.machine.history()).issues).toEqual([]);
  });

  it('a ToolLoopAgent on a V4 model stops at a spent budget before its tool, every call answered', async () => {
    const model = scriptedModelV4([
      { content: [call('c1', 'ping', {})], usage: { input: 1000, output: 500 } },
      { content: [text('never')] },
    ]);
    const m = mirrorAISDK({
      model,
      tools: { ping },
      pricing,
      budget: { maxCostUsd: 0.02, strict: false },
      logger: false,
    });
    const result = await new ToolLoopAgent({ ...m.settings }).generate({ prompt: 'go', abortSignal: m.signal });
    expect(model.prompts).toHaveLength(1);
    expect(m.result).toMatchObject({ outcome: 'budget_exceeded' });
    const answered = result.response.messages.flatMap((msg) =>
      msg.role === 'tool' ? msg.content.flatMap((p) => (p.type === 'tool-result' ? [p.toolCallId] : [])) : [],
    );
    expect(answered).toEqual(['c1']);
    expect(m.mirror.machine.current).toBe('BudgetExceeded');
  });

  it('under a strict cap, a V4 model call whose worst case would pass it is refused before the model gets it', async () => {
    const model = scriptedModelV4([
      { content: [call('c1', 'ping', {})], usage: { input: 10, output: 1000 } },
      { content: [call('c2', 'ping', {})], usage: { input: 10, output: 1000 } },
      { content: [text('done')] },
    ]);
    // Output alone priced, $1/64 per 1,000 tokens: the second call's worst case does not fit in 1.5 steps.
    const m = mirrorAISDK({
      model,
      tools: { ping },
      pricing: (u) => (u.outputTokens ?? 0) / 64_000,
      budget: { maxCostUsd: 1.5 / 64, strict: true },
      logger: false,
    });
    await expect(generateText({ ...m.settings, maxOutputTokens: 1000, prompt: 'go' })).rejects.toThrow(/exceeded/);
    expect(model.doGenerateCalls).toHaveLength(1);
    expect(m.mirror.usage.costUsd).toBe(1 / 64);
    expect(m.result?.outcome).toBe('budget_exceeded');
    expect(validateHistory(m.mirror.machine.history()).issues).toEqual([]);
  });
});
