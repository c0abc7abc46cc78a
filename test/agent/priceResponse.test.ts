import { priceResponse, priceUsage } from '../../lib/agent/money/priceResponse';
import { OperationError } from '../../lib/agent/TurnError';

const policy = { pricing: undefined, onUnknownCost: 'error' as const, capsCost: true, capsTokens: false };

describe('priceUsage', () => {
  it('takes the reported cost first, else what pricing computes, else none', () => {
    expect(priceUsage({ inputTokens: 10, costUsd: 0.5 }, 'm', () => 9)).toEqual({ costUsd: 0.5 });
    const tokens = { inputTokens: 10, outputTokens: 0 };
    expect(priceUsage(tokens, 'm', (u, { model }) => (model === 'm' ? u.inputTokens! / 100 : undefined))).toEqual({
      costUsd: 0.1,
    });
    expect(priceUsage(tokens, 'other', () => undefined)).toEqual({});
    expect(priceUsage(tokens, 'm', undefined)).toEqual({});
  });

  it('never prices a count the response did not report as zero: pricing is not asked, the cost is unknown', () => {
    const pricing = jest.fn(() => 0);
    expect(priceUsage({}, 'm', pricing)).toEqual({});
    expect(priceUsage({ inputTokens: 10 }, 'm', pricing)).toEqual({});
    expect(priceUsage({ outputTokens: 10 }, 'm', pricing)).toEqual({});
    expect(pricing).not.toHaveBeenCalled();
    expect(priceResponse({}, 'm', 'sendUserMessage', { ...policy, pricing }).error!.message).toBe(
      "cost failed: sendUserMessage reported no usage but no costUsd for model m, and pricing returned undefined: maxCostUsd cannot be enforced (set pricing, or onUnknownCost: 'warn' or 'ignore')",
    );
    expect(priceResponse({ inputTokens: 10 }, 'm', 'sendUserMessage', { ...policy, pricing }).error!.message).toMatch(
      /reported incomplete usage \(10 input tokens, no output tokens\) but no costUsd/,
    );
  });

  it('names pricing when it throws or answers anything but a non-negative number of dollars', () => {
    const tokens = { inputTokens: 1, outputTokens: 1 };
    const threw = priceUsage(tokens, 'm', () => {
      throw new Error('no price list');
    });
    expect(threw.error).toBeInstanceOf(OperationError);
    expect(threw.error!.message).toBe('pricing failed: no price list');
    expect(priceUsage(tokens, 'm', () => -1).error!.message).toBe(
      'pricing failed: returned -1 for model m, expected a non-negative number of USD or undefined',
    );
    expect(priceUsage(tokens, undefined, () => NaN).error!.message).toBe(
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
