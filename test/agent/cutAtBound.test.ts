import fc from 'fast-check';
import { cutAtBoundOf, estimateOutputTokens, StreamCutError, watchOutputBound } from '../../lib/agent/money/cutAtBound';

describe('estimateOutputTokens', () => {
  it('counts a third of the ASCII characters, and every other code unit as a token', () => {
    expect(estimateOutputTokens('')).toBe(0);
    expect(estimateOutputTokens('abcd')).toBe(2);
    expect(estimateOutputTokens('tok tok ')).toBe(3);
    expect(estimateOutputTokens('日本語')).toBe(3);
    expect(estimateOutputTokens('ab日')).toBe(2);
  });
});

describe('watchOutputBound', () => {
  it('cuts once the count of the deltas reaches the bound, however the text is split: the request is aborted', () => {
    fc.assert(
      fc.property(
        fc.array(fc.string({ maxLength: 20 }), { maxLength: 60 }),
        fc.integer({ min: 1, max: 200 }),
        (deltas, max) => {
          const watch = watchOutputBound(max, new AbortController().signal);
          let seen = '';
          for (const delta of deltas) {
            seen += delta;
            try {
              watch.add(delta);
            } catch (error) {
              // Cut exactly when the whole text so far reaches the bound, not before.
              expect(estimateOutputTokens(seen)).toBeGreaterThanOrEqual(max);
              expect(estimateOutputTokens(seen.slice(0, seen.length - delta.length))).toBeLessThan(max);
              expect(error).toBeInstanceOf(StreamCutError);
              expect(cutAtBoundOf(error)).toEqual({ countedTokens: estimateOutputTokens(seen), maxOutputTokens: max });
              expect(watch.signal.aborted).toBe(true);
              expect(watch.signal.reason).toBe(error);
              return;
            }
          }
          expect(estimateOutputTokens(seen)).toBeLessThan(max);
          expect(watch.signal.aborted).toBe(false);
        },
      ),
    );
  });

  it("cuts on the server's running count only past the bound, and follows the caller's signal", () => {
    const caller = new AbortController();
    const watch = watchOutputBound(100, caller.signal);
    watch.reported(100);
    expect(() => watch.reported(101)).toThrow(
      'the response stream was cut at its bound: 101 output tokens counted, its max 100; the server does not stop at max tokens',
    );
    const free = watchOutputBound(100, caller.signal);
    caller.abort(new Error('cancelled'));
    expect(free.signal.aborted).toBe(true);
  });

  it('cuts nothing without a bound', () => {
    const signal = new AbortController().signal;
    const watch = watchOutputBound(undefined, signal);
    watch.add('x'.repeat(1e6));
    expect(watch.signal).toBe(signal);
  });

  it('recognises the fact by its shape only', () => {
    expect(cutAtBoundOf(new Error('x'))).toBeUndefined();
    expect(
      cutAtBoundOf({ code: 'cut_at_bound', cutAtBound: { countedTokens: 'a', maxOutputTokens: 1 } }),
    ).toBeUndefined();
    expect(cutAtBoundOf({ code: 'cut_at_bound', cutAtBound: { countedTokens: 3, maxOutputTokens: 1 } })).toEqual({
      countedTokens: 3,
      maxOutputTokens: 1,
    });
  });
});
