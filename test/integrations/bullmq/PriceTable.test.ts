import { pricingFromTable } from '../../../lib/integrations/bullmq/PriceTable';

const usage = { inputTokens: 1_000_000, outputTokens: 1_000_000 };

describe('pricingFromTable', () => {
  it('prices a dated id the table lacks as its base id; an exact entry wins', () => {
    const pricing = pricingFromTable({
      'gpt-4.1': { inputUsdPerMTok: 2, outputUsdPerMTok: 8 },
      'gpt-4o-2024-08-06': { inputUsdPerMTok: 1, outputUsdPerMTok: 1 },
    });
    expect(pricing(usage, { model: 'gpt-4.1-2025-04-14' })).toBe(10);
    expect(pricing(usage, { model: 'gpt-4.1-20250414' })).toBe(10);
    expect(pricing(usage, { model: 'gpt-4o-2024-08-06' })).toBe(2);
    expect(pricing(usage, { model: 'gpt-4o-2024-11-20' })).toBeUndefined();
  });

  it("prices what neither names with '*', and never takes an inherited property for a price", () => {
    const star = pricingFromTable({ '*': { inputUsdPerMTok: 1, outputUsdPerMTok: 1 } });
    expect(star(usage, { model: 'other-2025-01-01' })).toBe(2);
    expect(star(usage, { model: undefined })).toBe(2);
    expect(pricingFromTable({})(usage, { model: 'constructor' })).toBeUndefined();
  });

  it('never prices a count the response did not report as 0: no price, so the call is charged at its hold', () => {
    const pricing = pricingFromTable({ '*': { inputUsdPerMTok: 1, outputUsdPerMTok: 1 } });
    expect(pricing({}, { model: 'gpt-local' })).toBeUndefined();
    expect(pricing({ inputTokens: 10 }, { model: 'gpt-local' })).toBeUndefined();
    expect(pricing({ outputTokens: 10 }, { model: 'gpt-local' })).toBeUndefined();
  });
});
