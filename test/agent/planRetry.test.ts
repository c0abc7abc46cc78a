import fc from 'fast-check';
import { planRetry } from '../../lib/agent/retry/planRetry';
import { defaultShouldRetry, type ResolvedRetry } from '../../lib/agent/retry/retryAfter';

const retry: ResolvedRetry = { retries: 2, baseDelayMs: 100, maxDelayMs: 1000, shouldRetry: defaultShouldRetry };
const NOW = Date.UTC(2026, 10, 23);
const clock = (): number => NOW;
const half = (): number => 0.5;

describe('planRetry', () => {
  it('stops when the retries are spent or the error is not worth retrying', () => {
    expect(planRetry(new Error('reset'), 3, retry, half, clock)).toEqual({ kind: 'stop' });
    expect(planRetry(Object.assign(new Error('bad request'), { status: 400 }), 1, retry, half, clock)).toEqual({
      kind: 'stop',
    });
  });

  it('waits the server’s Retry-After when it is longer than the backoff, and refuses one longer than maxDelayMs', () => {
    expect(planRetry({ status: 429, headers: { 'retry-after': '0.5' } }, 1, retry, half, clock)).toEqual({
      kind: 'wait',
      ms: 500,
      retryAfterMs: 500,
    });
    expect(planRetry({ status: 429, headers: { 'retry-after': '30' } }, 1, retry, half, clock)).toEqual({
      kind: 'refused',
      why: 'the server asked to wait 30000 ms (Retry-After), longer than retry.maxDelayMs 1000',
      retryAfterMs: 30000,
    });
  });

  it('takes delayMs when it answers, and names the hook that throws or answers nonsense', () => {
    expect(planRetry(new Error('x'), 1, { ...retry, delayMs: () => 7 }, half, clock)).toEqual({ kind: 'wait', ms: 7 });
    const bad = planRetry(new Error('x'), 1, { ...retry, delayMs: () => -1 }, half, clock);
    expect(bad.kind === 'error' && bad.error.message).toBe(
      'retry.delayMs failed: returned -1, expected a non-negative number of ms or undefined',
    );
    const threw = planRetry(
      new Error('x'),
      1,
      {
        ...retry,
        shouldRetry: () => {
          throw new Error('boom');
        },
      },
      half,
      clock,
    );
    expect(threw.kind === 'error' && threw.error.message).toBe('retry.shouldRetry failed: boom');
  });

  it('never waits longer than maxDelayMs unless the server asked, and never a negative time (property-based)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 10 }), fc.double({ min: 0, max: 0.999, noNaN: true }), (attempt, r) => {
        const plan = planRetry(new Error('reset'), attempt, { ...retry, retries: 10 }, () => r, clock);
        expect(plan.kind).toBe('wait');
        if (plan.kind === 'wait') expect(plan.ms >= 0 && plan.ms <= retry.maxDelayMs).toBe(true);
      }),
    );
  });
});
