import { worstCaseCost } from '../../lib/agent/money/worstCaseCost';
import type { Pricing } from '../../lib/agent/AgentLoop';

const bound = { inputTokens: 1000, maxOutputTokens: 100, model: 'm' };

describe('worstCaseCost', () => {
  it('prices the bound plain, all input written to the cache, all output reasoning: the dearest wins', () => {
    const pricing = jest.fn<ReturnType<Pricing>, Parameters<Pricing>>(
      (u) => (u.inputTokens! + u.outputTokens! + (u.cacheWriteTokens ?? 0) * 0.25) * 1e-6,
    );
    expect(worstCaseCost(bound, pricing)).toEqual({ costUsd: (1100 + 250) * 1e-6 });
    // Reasoning costs nothing more here, so both at once cannot cost more than the cache writes: not priced.
    expect(pricing).toHaveBeenCalledTimes(3);
  });

  it('prices both at once when each alone is dearer than plain, and takes it when it is the dearest', () => {
    const pricing: Pricing = (u) =>
      (u.inputTokens! + u.outputTokens! + (u.cacheWriteTokens ?? 0) * 0.25 + (u.reasoningTokens ?? 0) * 2) * 1e-6;
    expect(worstCaseCost(bound, pricing).costUsd).toBeCloseTo((1100 + 250 + 200) * 1e-6, 15);
  });

  it('is unknown, never $0, without pricing or a price, or when pricing throws', () => {
    expect(worstCaseCost(bound, undefined)).toEqual({ costUsd: undefined, why: 'no pricing option is set' });
    expect(worstCaseCost(bound, () => undefined).costUsd).toBeUndefined();
    expect(
      worstCaseCost(bound, () => {
        throw new Error('no list');
      }),
    ).toEqual({ costUsd: undefined, why: 'pricing threw for model m: Error: no list' });
  });
});
