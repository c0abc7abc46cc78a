import { AgentWithStateMachine } from '../../lib/agent/AgentWithStateMachine';
import type { AgentLoop } from '../../lib/agent/AgentLoop';
import { localPricing, USD_PER_TOKEN } from '../helpers/localPricing';

// A response that reports no usage was billed all the same: with pricing, the adapter charges
// it at its worst case (uncertain money), with or without a cap, never $0.

const WORST = (100 + 50) * USD_PER_TOKEN;

function loop(usage?: { inputTokens?: number; outputTokens?: number }): AgentLoop {
  return {
    llmCallBound: () => ({ inputTokens: 100, maxOutputTokens: 50, model: 'gpt-local' }),
    sendUserMessage: async () => ({ text: 'hi', model: 'gpt-local', ...(usage === undefined ? {} : { usage }) }),
    sendToolResults: async () => ({ text: 'unused' }),
    runTool: async (call) => ({ callId: call.id, output: '' }),
  };
}

describe('a response without usage, on the adapter', () => {
  it.each([
    ['no usage at all', undefined],
    ['input tokens only', { inputTokens: 10 }],
  ])('with no cap (%s): the turn ends well and its cost is uncertain at its worst case', async (_, usage) => {
    const agent = new AgentWithStateMachine(loop(usage), { logger: false, pricing: localPricing });
    const result = await agent.runTurn('hello');
    expect(result.outcome).toBe('end_of_turn');
    expect(result.usage).toMatchObject({ costUsd: WORST, uncertainUsd: WORST, releasedUsd: 0 });
  });

  it('under a plain dollar cap: the cap cannot be enforced (an error by default), and the call is charged at its worst case', async () => {
    const agent = new AgentWithStateMachine(loop(), {
      logger: false,
      pricing: localPricing,
      budget: { maxCostUsd: 1, strict: false },
    });
    const result = await agent.runTurn('hello');
    expect(result.outcome).toBe('error');
    expect(result.error?.message).toMatch(/reported no usage but no costUsd for model gpt-local/);
    expect(agent.usage).toMatchObject({ costUsd: WORST, uncertainUsd: WORST });
  });

  it('with usage reported, it is billed: nothing uncertain', async () => {
    const agent = new AgentWithStateMachine(loop({ inputTokens: 10, outputTokens: 5 }), {
      logger: false,
      pricing: localPricing,
    });
    const result = await agent.runTurn('hello');
    expect(result.usage.costUsd).toBeCloseTo(15 * USD_PER_TOKEN, 12);
    expect(result.usage.uncertainUsd).toBe(0);
  });
});
