import { generateText, streamText, tool, ToolLoopAgent } from 'ai';
import { z } from 'zod';
import { BudgetExceededError, type Pricing } from 'agent-state-machine';
import { validateHistory } from 'agent-state-machine/history';
import { requestTokenBound } from '../../../lib/internal/requestTokenBound';
import { mirrorAISDK } from '../../../lib/integrations/ai-sdk';
import { call, scriptedModel, text, type Step } from './scriptedModel';

/** Output alone is priced, $1/64 per 1,000 tokens: sums of steps are exact in binary. */
const pricing: Pricing = (usage) => (usage.outputTokens ?? 0) / 64_000;
const STEP = 1 / 64;
const pingStep = (i: number): Step => ({ content: [call(`c${i}`, 'ping', {})], usage: { output: 1000 } });
const ping = tool({ inputSchema: z.object({}), execute: async () => 'pong' });

describe('mirrorAISDK under a strict maxCostUsd', () => {
  it('generateText: the call whose worst case would pass the cap is refused before the model is invoked', async () => {
    const model = scriptedModel([pingStep(1), pingStep(2), pingStep(3), pingStep(4), { content: [text('done')] }]);
    // Two and a half steps: the third call's worst case (maxOutputTokens 1,000: one step) does not fit beside two.
    const m = mirrorAISDK({
      model,
      tools: { ping },
      budget: { maxCostUsd: 2.5 * STEP, strict: true },
      pricing,
      logger: false,
    });
    const error = await generateText({ ...m.settings, maxOutputTokens: 1000, prompt: 'ping until done' }).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(BudgetExceededError);
    expect(model.doGenerateCalls).toHaveLength(2);
    expect(m.mirror.usage.costUsd).toBe(2 * STEP);
    expect(m.result?.outcome).toBe('budget_exceeded');
    const last = m.mirror.machine.history().at(-1)!;
    expect(last.data).toMatchObject({ limit: 'maxCostUsd', used: 2 * STEP, max: 2.5 * STEP, hold: STEP });
    expect(validateHistory(m.mirror.machine.history()).ok).toBe(true);
  });

  it('bounds a call by its prompt, tool definitions and maxOutputTokens, as the SDK hands them to the model', async () => {
    const model = scriptedModel([{ content: [text('done')], usage: { output: 1000 } }]);
    const holds: unknown[] = [];
    const m = mirrorAISDK({
      model,
      tools: { ping },
      externalBudgets: [
        {
          capsCost: true,
          reserve: async (_kind, hold) => void holds.push(hold),
          charge: async () => undefined,
        },
      ],
      pricing: (u) => ((u.inputTokens ?? 0) + (u.outputTokens ?? 0)) / 1e6,
      logger: false,
    });
    await generateText({ ...m.settings, maxOutputTokens: 300, system: 'Be brief.', prompt: 'hi' });
    const o = model.doGenerateCalls[0]!;
    const inputTokens = requestTokenBound(
      { prompt: o.prompt, tools: o.tools, toolChoice: o.toolChoice, responseFormat: o.responseFormat },
      o.prompt.length,
      o.tools?.length ?? 0,
    );
    // The system prompt and the tool's schema are in what is counted.
    expect(JSON.stringify(o.prompt)).toContain('Be brief.');
    expect(o.tools).toHaveLength(1);
    expect(holds).toEqual([{ costUsd: (inputTokens + 300) / 1e6 }]);
  });

  it('ToolLoopAgent and streamText are refused the same way; without maxOutputTokens a strict cap refuses, naming it', async () => {
    const agentModel = scriptedModel([pingStep(1), pingStep(2), { content: [text('done')] }]);
    const a = mirrorAISDK({
      model: agentModel,
      tools: { ping },
      budget: { maxCostUsd: 1.5 * STEP, strict: true },
      pricing,
      logger: false,
    });
    const agent = new ToolLoopAgent({ ...a.settings, maxOutputTokens: 1000 });
    await expect(agent.generate({ prompt: 'go', abortSignal: a.signal })).rejects.toBeInstanceOf(BudgetExceededError);
    expect(agentModel.doGenerateCalls).toHaveLength(1);
    expect(a.mirror.usage.costUsd).toBe(STEP);

    const streamModel = scriptedModel([pingStep(1), pingStep(2), { content: [text('done')] }]);
    const s = mirrorAISDK({
      model: streamModel,
      tools: { ping },
      budget: { maxCostUsd: 1.5 * STEP, strict: true },
      pricing,
      logger: false,
    });
    const stream = streamText({ ...s.settings, maxOutputTokens: 1000, prompt: 'go' });
    await stream.consumeStream();
    expect(streamModel.doStreamCalls).toHaveLength(1);
    expect(s.result?.outcome).toBe('budget_exceeded');
    expect(s.mirror.usage.costUsd).toBe(STEP);

    const unbounded = scriptedModel([{ content: [text('hi')] }]);
    const u = mirrorAISDK({ model: unbounded, budget: { maxCostUsd: 1, strict: true }, pricing, logger: false });
    await expect(generateText({ ...u.settings, prompt: 'hi' })).rejects.toThrow(/sets no maxOutputTokens/);
    expect(unbounded.doGenerateCalls).toHaveLength(0);
    expect(u.result?.outcome).toBe('error');
  });

  it('streamText: an answer whose finished usage passes its bound is charged at that usage (not the smaller hold), and stops a strict cap', async () => {
    // Little text streamed, 1,500 output tokens reported against maxOutputTokens 1,000: the
    // server ignored max tokens, and billed what it reports.
    const model = scriptedModel([{ content: [text('done')], usage: { output: 1500 } }, { content: [text('again')] }]);
    const m = mirrorAISDK({ model, budget: { maxCostUsd: 10 * STEP, strict: true }, pricing, logger: false });
    const stream = streamText({ ...m.settings, maxOutputTokens: 1000, prompt: 'go' });
    await stream.consumeStream();
    expect(model.doStreamCalls).toHaveLength(1);
    expect(m.mirror.usage.costUsd).toBe(1.5 * STEP);
    expect(m.result?.outcome).toBe('budget_exceeded');
    const last = m.mirror.machine.history().at(-1)!;
    expect(last.data).toMatchObject({
      boundExceeded: { outputTokens: 1500, maxOutputTokens: 1000, overshootTokens: 500 },
    });
  });
});
