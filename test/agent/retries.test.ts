import OpenAI, { APIConnectionError, APIError, APIUserAbortError } from 'openai';
import { APICallError } from 'ai';
import { defaultShouldRetry, retryAfterMs, LLMCallError, OperationError } from '../../lib/index';
import { drive } from '../helpers/drive';

const NOW = Date.UTC(2026, 10, 22, 12, 0, 0);
const openaiError = (status: number, headers: Record<string, string> = {}): APIError =>
  APIError.generate(status, { error: { message: `status ${status}` } }, `status ${status}`, new Headers(headers));
const aiError = (statusCode: number | undefined, responseHeaders?: Record<string, string>): APICallError =>
  new APICallError({
    message: `status ${statusCode}`,
    url: 'http://127.0.0.1/v1',
    requestBodyValues: {},
    ...(statusCode === undefined ? {} : { statusCode }),
    ...(responseHeaders === undefined ? {} : { responseHeaders }),
  });

describe('defaultShouldRetry()', () => {
  it.each([400, 401, 403, 404, 413, 422])('does not retry an openai APIError with status %i', (status) => {
    expect(defaultShouldRetry(openaiError(status))).toBe(false);
    expect(defaultShouldRetry(aiError(status))).toBe(false);
  });
  it.each([408, 409, 425, 429, 500, 502, 503, 529])('retries status %i, from openai and from the AI SDK', (status) => {
    expect(defaultShouldRetry(openaiError(status))).toBe(true);
    expect(defaultShouldRetry(aiError(status))).toBe(true);
  });
  it('retries an error without a status (a reset connection), never an abort', () => {
    expect(defaultShouldRetry(new APIConnectionError({ message: 'socket hang up' }))).toBe(true);
    expect(defaultShouldRetry(aiError(undefined))).toBe(true);
    expect(defaultShouldRetry(new Error('ECONNRESET'))).toBe(true);
    expect(defaultShouldRetry(new APIUserAbortError())).toBe(false);
    expect(defaultShouldRetry(new DOMException('stop', 'AbortError'))).toBe(false);
    expect(OpenAI).toBeDefined();
  });
});

describe('retryAfterMs()', () => {
  it('reads retryAfterMs, retry-after-ms, retry-after seconds and HTTP dates from Headers or a plain record', () => {
    expect(retryAfterMs({ retryAfterMs: 1234 }, NOW)).toBe(1234);
    expect(retryAfterMs(openaiError(429, { 'retry-after': '2' }), NOW)).toBe(2000);
    expect(retryAfterMs(openaiError(429, { 'retry-after-ms': '1500', 'retry-after': '2' }), NOW)).toBe(1500);
    expect(retryAfterMs(aiError(529, { 'Retry-After': '3' }), NOW)).toBe(3000);
    expect(retryAfterMs(aiError(503, { 'retry-after': new Date(NOW + 7000).toUTCString() }), NOW)).toBe(7000);
    expect(retryAfterMs(aiError(503, { 'retry-after': 'soon' }), NOW)).toBeUndefined();
    expect(retryAfterMs(new Error('x'), NOW)).toBeUndefined();
    expect(retryAfterMs(null, NOW)).toBeUndefined();
  });
});

describe('AgentWithStateMachine retries', () => {
  it('.runTurn() does not retry a 400 by default and retries a 529 twice', async () => {
    const bad = drive({ replies: [{ text: 'never' }] });
    bad.agent.sendUserMessage = () => Promise.reject(openaiError(400));
    const result = await bad.adapter.runTurn('go');
    expect(result.error).toBeInstanceOf(LLMCallError);
    expect(result.error!.message).toBe('sendUserMessage failed after 1 attempt: 400 status 400');
    expect(bad.sleeps).toEqual([]);

    let calls = 0;
    const flaky = drive({ replies: [] });
    flaky.agent.sendUserMessage = () => (++calls < 3 ? Promise.reject(aiError(529)) : Promise.resolve({ text: 'ok' }));
    expect((await flaky.adapter.runTurn('go')).text).toBe('ok');
    expect(flaky.sleeps).toEqual([375, 750]); // random 0.5: 3/4 of 500 ms, then of 1,000 ms
  });

  it('.runTurn() waits at least what Retry-After asks, and does not retry when it asks for more than maxDelayMs', async () => {
    let calls = 0;
    const d = drive({ replies: [] });
    d.agent.sendUserMessage = () =>
      ++calls === 1 ? Promise.reject(openaiError(429, { 'retry-after': '2' })) : Promise.resolve({ text: 'ok' });
    expect((await d.adapter.runTurn('go')).text).toBe('ok');
    expect(d.sleeps).toEqual([2000]);
    expect(d.adapter.machine.history().find((r) => r.to === 'ProcessingLLMResponse')!.data).toMatchObject({
      failures: [{ attempt: 1, delayMs: 2000, retryAfterMs: 2000 }],
    });

    const long = drive({ replies: [] }, { retry: { maxDelayMs: 10_000 } });
    long.agent.sendUserMessage = () => Promise.reject(aiError(429, { 'retry-after': '60' }));
    const result = await long.adapter.runTurn('go');
    expect(result.outcome).toBe('error');
    expect(long.sleeps).toEqual([]);
    expect(long.adapter.machine.history().at(-1)!.data).toMatchObject({
      failures: [
        {
          attempt: 1,
          retryAfterMs: 60_000,
          noRetry: 'the server asked to wait 60000 ms (Retry-After), longer than retry.maxDelayMs 10000',
        },
      ],
    });
  });

  it('retry.delayMs overrides the wait; a throwing one ends the turn naming it', async () => {
    const d = drive(
      { replies: [{ error: 'reset' }, { error: 'reset' }, { text: 'ok' }] },
      { retry: { delayMs: (_e, attempt) => (attempt === 1 ? 7 : undefined) } },
    );
    expect((await d.adapter.runTurn('go')).text).toBe('ok');
    expect(d.sleeps).toEqual([7, 750]);

    const t = drive(
      { replies: [{ error: 'reset' }] },
      {
        retry: {
          delayMs: () => {
            throw new Error('oops');
          },
        },
      },
    );
    const result = await t.adapter.runTurn('go');
    expect(result.error).toBeInstanceOf(OperationError);
    expect(result.error!.message).toBe('retry.delayMs failed: oops');
  });
});
