import { InvalidArgumentError } from 'agent-state-machine';
import { createPricing } from '../../../lib/integrations/pricing';

describe('createPricing', () => {
  const pricing = createPricing();

  it('prices a known model from the bundled data, cached input at its own rate', () => {
    // gpt-4o-mini: $0.15 input, $0.075 cached input, $0.60 output per million tokens.
    const full = pricing({ inputTokens: 1_000_000, outputTokens: 1_000_000 }, { model: 'gpt-4o-mini' });
    const cached = pricing(
      { inputTokens: 1_000_000, cachedInputTokens: 500_000, outputTokens: 1_000_000 },
      { model: 'gpt-4o-mini' },
    );
    expect(full).toBeCloseTo(0.75, 10);
    expect(cached).toBeCloseTo(0.7125, 10);
  });

  it('finds dated model ids and Anthropic models, with cache writes dearer than input', () => {
    expect(pricing({ inputTokens: 1_000_000, outputTokens: 0 }, { model: 'gpt-4o-mini-2024-07-18' })).toBeCloseTo(
      0.15,
      10,
    );
    const plain = pricing({ inputTokens: 1_000_000, outputTokens: 0 }, { model: 'claude-sonnet-4-6' })!;
    const writes = pricing(
      { inputTokens: 1_000_000, cacheWriteTokens: 1_000_000, outputTokens: 0 },
      { model: 'claude-sonnet-4-6' },
    )!;
    expect(plain).toBeGreaterThan(0);
    expect(writes).toBeGreaterThan(plain);
  });

  it('returns undefined for an unknown model, no model, or no tokens — never a guess', () => {
    expect(pricing({ inputTokens: 10, outputTokens: 10 }, { model: 'my-local-llama' })).toBeUndefined();
    expect(pricing({ inputTokens: 10, outputTokens: 10 }, { model: undefined })).toBeUndefined();
    expect(pricing({}, { model: 'gpt-4o-mini' })).toBeUndefined();
    // Half the usage is no usage: the missing count is unknown, never 0.
    expect(pricing({ inputTokens: 10 }, { model: 'gpt-4o-mini' })).toBeUndefined();
    expect(pricing({ outputTokens: 10 }, { model: 'gpt-4o-mini' })).toBeUndefined();
    expect(
      createPricing({ catalog: false })({ inputTokens: 10, outputTokens: 10 }, { model: 'gpt-4o-mini' }),
    ).toBeUndefined();
  });

  it('lets your prices per model win over the data', () => {
    const p = createPricing({
      prices: {
        'gpt-4o-mini': { inputPerMTok: 1, outputPerMTok: 2, cachedInputPerMTok: 0.5 },
        'my-local-llama': { inputPerMTok: 0, outputPerMTok: 0 },
        special: (usage) => (usage.outputTokens ?? 0) * 0.001,
      },
    });
    expect(
      p({ inputTokens: 1_000_000, cachedInputTokens: 400_000, outputTokens: 500_000 }, { model: 'gpt-4o-mini' }),
    ).toBeCloseTo(0.6 + 0.2 + 1, 10);
    expect(p({ inputTokens: 5, outputTokens: 5 }, { model: 'my-local-llama' })).toBe(0);
    expect(p({ inputTokens: 0, outputTokens: 3 }, { model: 'special' })).toBeCloseTo(0.003, 10);
    // A count the response did not report is never priced, by your function either.
    expect(p({ outputTokens: 3 }, { model: 'special' })).toBeUndefined();
    expect(p({ inputTokens: 1_000_000, outputTokens: 0 }, { model: 'claude-sonnet-4-6' })).toBeGreaterThan(0);
  });

  it('rejects bad prices by name', () => {
    expect(() => createPricing({ prices: { m: { inputPerMTok: -1, outputPerMTok: 1 } } })).toThrow(
      'Expected `options.prices["m"].inputPerMTok` to be a non-negative number',
    );
    expect(() => createPricing({ prices: { m: { inputPerMTok: 1 } as never } })).toThrow(InvalidArgumentError);
    expect(() => createPricing({ providerId: '' })).toThrow('options.providerId');
  });

  it('prices a dated id your prices lack as its base id, and gives undefined when neither is there', () => {
    const own = createPricing({ prices: { 'gpt-4.1': { inputPerMTok: 2, outputPerMTok: 8 } }, catalog: false });
    const usage = { inputTokens: 1_000_000, outputTokens: 1_000_000 };
    expect(own(usage, { model: 'gpt-4.1-2025-04-14' })).toBe(10);
    expect(own(usage, { model: 'gpt-4.1-20250414' })).toBe(10);
    expect(own(usage, { model: 'gpt-4.1-mini-2025-04-14' })).toBeUndefined();
    expect(own(usage, { model: 'gpt-4.1-preview' })).toBeUndefined();
    // An exact price for the dated id wins over its base's.
    const both = createPricing({
      prices: {
        'gpt-4.1': { inputPerMTok: 2, outputPerMTok: 8 },
        'gpt-4.1-2025-04-14': { inputPerMTok: 1, outputPerMTok: 1 },
      },
      catalog: false,
    });
    expect(both(usage, { model: 'gpt-4.1-2025-04-14' })).toBe(2);
  });
});
