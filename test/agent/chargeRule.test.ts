import { chargeAttempt, neverSent } from '../../lib/agent/money/chargeRule';
import { billingRules, failureStatus, PROVIDER_BILLING } from '../../lib/agent/money/providerBilling';

const refused = (code: string) => Object.assign(new Error(`connect ${code} 127.0.0.1:9`), { code });

describe('chargeAttempt: what an ended LLM attempt costs', () => {
  it('charges a priced response its price, whatever its hold', () => {
    expect(chargeAttempt({ kind: 'priced', costUsd: 0.002 }, 0.01)).toEqual({ kind: 'priced', costUsd: 0.002 });
    expect(chargeAttempt({ kind: 'priced', costUsd: 0.002 }, undefined)).toEqual({ kind: 'priced', costUsd: 0.002 });
  });

  it('charges a response of unknown cost its whole hold, saying why', () => {
    expect(chargeAttempt({ kind: 'unpriced', why: 'the cost of gpt-local-2025-01-01 is unknown' }, 0.01)).toEqual({
      kind: 'hold',
      costUsd: 0.01,
      reason: 'charged at its hold: the cost of gpt-local-2025-01-01 is unknown',
    });
  });

  it.each([
    ['a timeout', Object.assign(new Error('Request timed out.'), { name: 'APIConnectionTimeoutError' })],
    ['a cut stream', new Error('the response stream ended before the model finished')],
    ['a 500', Object.assign(new Error('500 internal error'), { status: 500 })],
    ['a 503', Object.assign(new Error('service unavailable'), { status: 503 })],
    ['an error event after a 200 (no status)', Object.assign(new Error('overloaded_error'), { type: 'error' })],
    ['a reset after sending', Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' })],
    ['an abort mid-flight', Object.assign(new Error('aborted'), { name: 'AbortError' })],
    ['a thrown string', 'boom'],
  ])('charges a failed attempt that may have left (%s) its whole hold', (_, error) => {
    const charge = chargeAttempt({ kind: 'failed', error }, 0.01);
    expect(charge).toMatchObject({ kind: 'hold', costUsd: 0.01 });
    expect((charge as { reason: string }).reason).toMatch(
      /^charged at its hold: it failed after the request may have left/,
    );
  });

  it('names the status of a failed attempt when its message does not', () => {
    expect(
      chargeAttempt({ kind: 'failed', error: Object.assign(new Error('bad gateway'), { status: 502 }) }, 1),
    ).toEqual({
      kind: 'hold',
      costUsd: 1,
      reason: 'charged at its hold: it failed after the request may have left (502 bad gateway)',
    });
  });

  it.each([
    ['a 429 (openai, @anthropic-ai/sdk: status)', Object.assign(new Error('rate limited'), { status: 429 }), 429],
    ['a 529 overload', Object.assign(new Error('overloaded'), { status: 529 }), 529],
    ['a 400 the AI SDK reports (statusCode)', Object.assign(new Error('bad request'), { statusCode: 400 }), 400],
    [
      'a 401 wrapped by a framework',
      new Error('the model call failed', { cause: Object.assign(new Error('unauthorized'), { status: 401 }) }),
      401,
    ],
  ])('releases the hold of %s: the provider documents it as not billed', (_, error, status) => {
    const charge = chargeAttempt({ kind: 'failed', error }, 0.01);
    expect(charge).toMatchObject({ kind: 'release', releasedUsd: 0.01 });
    expect((charge as { reason: string }).reason).toMatch(new RegExp(`^answered ${status}, not billed: `));
  });

  it('follows the billing rows it is given: a row overridden to uncertain charges the hold again', () => {
    const error = Object.assign(new Error('rate limited'), { status: 429 });
    const rules = billingRules([
      { status: 429, billing: 'uncertain', providers: ['mine'], why: 'my proxy bills it', source: 'me' },
    ]);
    expect(chargeAttempt({ kind: 'failed', error }, 0.01, rules)).toMatchObject({ kind: 'hold', costUsd: 0.01 });
    expect(chargeAttempt({ kind: 'failed', error }, 0.01, PROVIDER_BILLING).kind).toBe('release');
  });

  it('releases the hold of a request that never left: connection refused, no such host', () => {
    expect(chargeAttempt({ kind: 'failed', error: refused('ECONNREFUSED') }, 0.01)).toEqual({
      kind: 'release',
      reason: 'the request never left: connection failed (ECONNREFUSED)',
      releasedUsd: 0.01,
    });
    expect(chargeAttempt({ kind: 'failed', error: refused('ECONNREFUSED') }, undefined)).toEqual({
      kind: 'release',
      reason: 'the request never left: connection failed (ECONNREFUSED)',
    });
    expect(chargeAttempt({ kind: 'failed', error: refused('ENOTFOUND') }, 0.01).kind).toBe('release');
  });

  it('without a hold, charges nothing but says the cost is unknown', () => {
    expect(chargeAttempt({ kind: 'failed', error: new Error('500') }, undefined)).toEqual({
      kind: 'unknown',
      reason: 'it failed after the request may have left (500)',
    });
    expect(chargeAttempt({ kind: 'unpriced', why: 'the cost of x is unknown' }, undefined)).toEqual({
      kind: 'unknown',
      reason: 'the cost of x is unknown',
    });
  });
});

describe('neverSent: whether an error proves the request never left', () => {
  it('follows the causes an SDK wraps (APIConnectionError → fetch failed → the socket error)', () => {
    const fetchFailed = new TypeError('fetch failed', { cause: refused('ECONNREFUSED') });
    const sdk = new Error('Connection error.', { cause: fetchFailed });
    expect(neverSent(sdk)).toBe('connection failed (ECONNREFUSED)');
  });

  it('takes an AggregateError only when every address was refused', () => {
    expect(neverSent(new AggregateError([refused('ECONNREFUSED'), refused('ECONNREFUSED')]))).toBeDefined();
    expect(neverSent(new AggregateError([refused('ECONNREFUSED'), new Error('socket hang up')]))).toBeUndefined();
  });

  it('does not take a reset, a timeout, a status or a cycle of causes as proof', () => {
    expect(neverSent(Object.assign(new Error('x'), { code: 'ECONNRESET' }))).toBeUndefined();
    expect(neverSent(Object.assign(new Error('x'), { code: 'ETIMEDOUT' }))).toBeUndefined();
    expect(neverSent(Object.assign(new Error('x'), { status: 503 }))).toBeUndefined();
    const loop: { cause?: unknown } = {};
    loop.cause = loop;
    expect(neverSent(loop)).toBeUndefined();
    expect(neverSent(undefined)).toBeUndefined();
  });
});

describe('the billing rows: which failures the providers do not bill', () => {
  it('cites a source for every row, and leaves 5xx but the 529 overload uncertain', () => {
    for (const row of PROVIDER_BILLING) {
      expect(row.source).toMatch(/^https:\/\//);
      expect(row.why.length).toBeGreaterThan(10);
    }
    const released = PROVIDER_BILLING.filter((r) => r.billing === 'released').map((r) => r.status);
    expect(released).toEqual([400, 401, 403, 404, 413, 429, 529]);
  });

  it('failureStatus() reads status, statusCode or response.status, on the error or a cause', () => {
    expect(failureStatus(Object.assign(new Error('x'), { status: 429 }))).toBe(429);
    expect(failureStatus(Object.assign(new Error('x'), { statusCode: 503 }))).toBe(503);
    expect(failureStatus(Object.assign(new Error('x'), { response: { status: 404 } }))).toBe(404);
    expect(failureStatus(new Error('x', { cause: { status: 401 } }))).toBe(401);
    expect(failureStatus(Object.assign(new Error('x'), { status: 'a string' }))).toBeUndefined();
    expect(failureStatus('boom')).toBeUndefined();
  });

  it('billingRules() refuses a row that is not one, naming it', () => {
    expect(() => billingRules([{ status: 4290, billing: 'released' } as never])).toThrow(
      /^Expected `billing\[0\]` to be a row \{ status: an HTTP status 100–599, .*got `\{"status":4290,"billing":"released"\}` \(object\)$/,
    );
    expect(() => billingRules([{ status: 429, billing: 'free' } as never])).toThrow(/'released' \| 'uncertain'/);
  });
});
