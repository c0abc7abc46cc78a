import fc from 'fast-check';
import { afterCharge, type ChargedFacts } from '../../lib/agent/calls/afterCharge';
import { afterFailure } from '../../lib/agent/calls/afterFailure';
import type { BoundExceeded } from '../../lib/agent/boundExceeded';
import { StreamCutError } from '../../lib/agent/money/cutAtBound';
import { OperationError } from '../../lib/agent/TurnError';

// The decisions after an attempt's charge, which both drivers make by these two functions.

const passed: BoundExceeded = { outputTokens: 900, maxOutputTokens: 100 } as unknown as BoundExceeded;
const priceError = new OperationError('cost', new Error('no price'));

const facts = fc.record({
  passed: fc.boolean(),
  tripsOnBound: fc.boolean(),
  problem: fc.option(fc.constant('text must be a string'), { nil: undefined }),
  problems: fc.boolean(),
  capsUsage: fc.boolean(),
  priceError: fc.boolean(),
  note: fc.option(fc.constant('cost unknown'), { nil: undefined }),
  warned: fc.boolean(),
});

function factsOf(f: {
  passed: boolean;
  tripsOnBound: boolean;
  problem: string | undefined;
  problems: boolean;
  capsUsage: boolean;
  priceError: boolean;
  note: string | undefined;
  warned: boolean;
}): ChargedFacts {
  return {
    charged: {
      passed: f.passed ? passed : undefined,
      problems: f.problems ? ['usage.outputTokens must be a non-negative number, got `NaN` (number)'] : [],
      priced: { ...(f.priceError && { error: priceError }), ...(f.note !== undefined && { note: f.note }) },
      valid: { inputTokens: 10 },
    },
    operation: 'sendUserMessage',
    value: { text: 'x', usage: { inputTokens: 10, outputTokens: Number.NaN } },
    problem: f.problem,
    tripsOnBound: f.tripsOnBound,
    capsUsage: f.capsUsage,
    warnedUnknownCost: f.warned,
  };
}

describe('afterCharge', () => {
  it('decides in one order: a tripped bound, the contract, usage a cap cannot read, a failed price, else the response', () => {
    fc.assert(
      fc.property(facts, (f) => {
        const next = afterCharge(factsOf(f));
        if (f.passed && f.tripsOnBound) return expect(next).toEqual({ kind: 'trip', passed });
        if (f.problem !== undefined)
          return expect(next).toMatchObject({ kind: 'failed', data: { problem: f.problem } });
        if (f.problems && f.capsUsage)
          return expect(next).toMatchObject({ kind: 'failed', data: { usageProblems: [expect.any(String)] } });
        if (f.priceError) return expect(next).toMatchObject({ kind: 'failed', error: priceError });
        expect(next.kind).toBe('response');
        if (next.kind !== 'response') return;
        // The warning once a run; the note on every response whose cost is unknown.
        expect(next.warn).toBe(f.warned ? undefined : f.note);
        expect(next.notes?.unknownCost).toBe(f.note);
        expect(next.notes?.usageProblems?.length ?? 0).toBe(f.problems ? 1 : 0);
      }),
    );
  });

  it('is pure: the same facts give the same decision, and nothing it is given changes', () => {
    fc.assert(
      fc.property(facts, (f) => {
        const given = factsOf(f);
        const copy = structuredClone({ ...given, charged: { ...given.charged, priced: {} } });
        const a = afterCharge(given);
        const b = afterCharge(given);
        expect(JSON.stringify(a)).toBe(JSON.stringify(b));
        expect({ ...given, charged: { ...given.charged, priced: {} } }).toEqual(copy);
      }),
    );
  });
});

describe('afterFailure', () => {
  const hold = { kind: 'hold', costUsd: 0.02, reason: '500 after sending' } as const;

  it('a stream cut at its bound ends the call and asks no plan (a plan may draw a random jitter)', () => {
    const plan = jest.fn();
    const ended = afterFailure(2, new StreamCutError({ countedTokens: 120, maxOutputTokens: 100 }), hold, plan);
    expect(plan).not.toHaveBeenCalled();
    expect(ended).toMatchObject({
      ends: true,
      next: undefined,
      cut: { countedTokens: 120, maxOutputTokens: 100 },
      failure: { attempt: 2, noRetry: 'the response stream was cut at its bound' },
      line: { costUsd: 0.02, chargedAtHold: '500 after sending', cutAtBound: { countedTokens: 120 } },
    });
  });

  it('keeps the wait, the server-asked wait and a refusal in the failure record; only a wait or a maybe goes on', () => {
    const error = new Error('503');
    expect(afterFailure(1, error, hold, () => ({ kind: 'wait', ms: 250, retryAfterMs: 200 }))).toMatchObject({
      ends: false,
      failure: { attempt: 1, error: '503', retryAfterMs: 200, delayMs: 250 },
    });
    expect(afterFailure(1, error, hold, () => ({ kind: 'maybe' })).ends).toBe(false);
    const refused = afterFailure(1, error, hold, () => ({ kind: 'refused', why: 'asked 90 s', retryAfterMs: 90_000 }));
    expect(refused).toMatchObject({ ends: true, failure: { noRetry: 'asked 90 s', retryAfterMs: 90_000 } });
    expect(refused.failure.delayMs).toBeUndefined();
    expect(afterFailure(1, error, hold, () => ({ kind: 'stop' })).ends).toBe(true);
    expect(afterFailure(1, error, hold, () => ({ kind: 'error', error: priceError })).ends).toBe(true);
  });
});
