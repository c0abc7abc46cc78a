import { pricingFromTable, type PriceTable } from '../../../lib/integrations/bullmq/PriceTable';
import { submitBatch } from '../../../lib/integrations/bullmq/submitBatch';
import { createPricing } from '../../../lib/integrations/pricing/createPricing';

const usage = { inputTokens: 1_000_000, outputTokens: 1_000_000 };

describe('pricingFromTable', () => {
  it('prices a dated id the table lacks as its base id; an exact entry wins', () => {
    const pricing = pricingFromTable({
      'gpt-4.1': { inputPerMTok: 2, outputPerMTok: 8 },
      'gpt-4o-2024-08-06': { inputPerMTok: 1, outputPerMTok: 1 },
    });
    expect(pricing(usage, { model: 'gpt-4.1-2025-04-14' })).toBe(10);
    expect(pricing(usage, { model: 'gpt-4.1-20250414' })).toBe(10);
    expect(pricing(usage, { model: 'gpt-4o-2024-08-06' })).toBe(2);
    expect(pricing(usage, { model: 'gpt-4o-2024-11-20' })).toBeUndefined();
  });

  it("prices what neither names with '*', and never takes an inherited property for a price", () => {
    const star = pricingFromTable({ '*': { inputPerMTok: 1, outputPerMTok: 1 } });
    expect(star(usage, { model: 'other-2025-01-01' })).toBe(2);
    expect(star(usage, { model: undefined })).toBe(2);
    expect(pricingFromTable({})(usage, { model: 'constructor' })).toBeUndefined();
  });

  it('never prices a count the response did not report as 0: no price, so the call is charged at its hold', () => {
    const pricing = pricingFromTable({ '*': { inputPerMTok: 1, outputPerMTok: 1 } });
    expect(pricing({}, { model: 'gpt-local' })).toBeUndefined();
    expect(pricing({ inputTokens: 10 }, { model: 'gpt-local' })).toBeUndefined();
    expect(pricing({ outputTokens: 10 }, { model: 'gpt-local' })).toBeUndefined();
  });
});

describe('one price shape with createPricing', () => {
  const prices = {
    'claude-x': {
      inputPerMTok: 3,
      outputPerMTok: 15,
      cachedInputPerMTok: 0.3,
      cacheWritePerMTok: 3.75,
      webSearchPerUse: 0.01,
    },
  };
  const searched = {
    inputTokens: 10_000,
    outputTokens: 2_000,
    cachedInputTokens: 4_000,
    cacheWriteTokens: 1_000,
    serverToolUses: { webSearch: 3 },
  };

  it('prices cache reads, cache writes and server tool fees as createPricing does', () => {
    const byTable = pricingFromTable(prices)(searched, { model: 'claude-x' });
    const byCreate = createPricing({ prices, catalog: false })(searched, { model: 'claude-x' });
    // 5,000 × $3 + 4,000 × $0.30 + 1,000 × $3.75 + 2,000 × $15 per million, and 3 searches at $0.01.
    expect(byTable).toBeCloseTo(0.04995 + 0.03, 10);
    expect(byTable).toBe(byCreate);
  });

  it('a fee the table lacks leaves the response unpriced, never free', () => {
    const pricing = pricingFromTable({ '*': { inputPerMTok: 1, outputPerMTok: 1 } });
    expect(pricing({ ...usage, serverToolUses: { webFetch: 1 } }, { model: 'm' })).toBeUndefined();
  });

  it('still prices a table kept in Redis by a producer before the rename', () => {
    const kept = { '*': { inputUsdPerMTok: 2, outputUsdPerMTok: 8 } } as unknown as PriceTable;
    expect(pricingFromTable(kept)(usage, { model: 'm' })).toBe(10);
  });

  it.each([
    [
      { '*': { inputUsdPerMTok: 2, outputUsdPerMTok: 8 } },
      /`pricing\["\*"\]\.inputUsdPerMTok`.*left out: prices take `inputPerMTok` now/,
    ],
    [
      { m: { inputPerMTok: 2 } },
      /`pricing\["m"\]\.outputPerMTok`.*a non-negative number of dollars per million tokens/,
    ],
    [
      { m: { inputPerMTok: 2, outputPerMTok: 1, webSearchPerUse: -1 } },
      /`pricing\["m"\]\.webSearchPerUse`.*per use or undefined/,
    ],
    [{ m: 5 }, /`pricing\["m"\]`.*TokenPrices/],
  ])('submitBatch refuses a table that is not this shape, naming the key: %j', async (pricing, message) => {
    await expect(submitBatch([], { connection: 'redis://127.0.0.1:1', name: 'q', pricing } as never)).rejects.toThrow(
      message,
    );
  });
});
