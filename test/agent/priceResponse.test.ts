import { priceResponse, priceUsage } from '../../lib/agent/priceResponse';
import { OperationError } from '../../lib/agent/TurnError';

const policy = { pricing: undefined, onUnknownCost: 'error' as const, capsCost: true, capsTokens: false };

describe('priceUsage', () => {
  it('takes the reported cost first, else what pricing computes, else none', () => {
    expect(priceUsage({ inputTokens: 10, costUsd: 0.5 }, 'm', () => 9)).toEqual({ costUsd: 0.5 });
    expect(
      priceUsage({ inputTokens: 10 }, 'm', (u, { model }) => (model === 'm' ? (u.inputTokens ?? 0) / 100 : undefined)),
    ).toEqual({ costUsd: 0.1 });
    expect(priceUsage({ inputTokens: 10 }, 'other', () => undefined)).toEqual({});
    expect(priceUsage({ inputTokens: 10 }, 'm', undefined)).toEqual({});
  });

  it('names pricing when it throws or answers anything but a non-negative number of dollars', () => {
    const threw = priceUsage({}, 'm', () => {
      throw new Error('no price list');
    });
    expect(threw.error).toBeInstanceOf(OperationError);
    expect(threw.error!.message).toBe('pricing failed: no price list');
    expect(priceUsage({}, 'm', () => -1).error!.message).toBe(
      'pricing failed: returned -1 for model m, expected a non-negative number of USD or undefined',
    );
    expect(priceUsage({}, undefined, () => NaN).error!.message).toBe(
      'pricing failed: returned NaN for model (none), expected a non-negative number of USD or undefined',
    );
  });
});

describe('priceResponse', () => {
  it('is an error when a dollar cap cannot be enforced, naming the tokens and the model', () => {
    const priced = priceResponse({ inputTokens: 1000, outputTokens: 100 }, 'mystery-1', 'sendUserMessage', policy);
    expect(priced.error!.message).toBe(
      "cost failed: sendUserMessage reported 1100 tokens (1000 in, 100 out) but no costUsd for model mystery-1, and no pricing option is set: maxCostUsd cannot be enforced (set pricing, or onUnknownCost: 'warn' or 'ignore')",
    );
  });

  it("notes it under onUnknownCost 'warn', and says nothing under 'ignore' or without a cap", () => {
    expect(
      priceResponse({ inputTokens: 5 }, 'm', 'sendToolResults', { ...policy, onUnknownCost: 'warn' }).note,
    ).toMatch(/maxCostUsd cannot be enforced$/);
    expect(priceResponse({ inputTokens: 5 }, 'm', 'sendToolResults', { ...policy, onUnknownCost: 'ignore' })).toEqual(
      {},
    );
    expect(priceResponse({ inputTokens: 5 }, 'm', 'sendToolResults', { ...policy, capsCost: false })).toEqual({});
  });

  it('is an error when a token cap meets a response with no tokens', () => {
    expect(
      priceResponse({ costUsd: 0.1 }, undefined, 'sendUserMessage', { ...policy, capsCost: false, capsTokens: true })
        .error!.message,
    ).toBe(
      "cost failed: sendUserMessage reported no tokens (model (not reported)): maxTokens cannot be enforced (set pricing, or onUnknownCost: 'warn' or 'ignore')",
    );
  });
});
