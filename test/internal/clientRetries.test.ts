// The client's retries made by a mirror (shared by the Agents SDK and LangGraph mirrors): each
// failed request the client would retry is charged, waited on and the retry gated; a refused
// gate ends the call with the mirror's stop; a stream is retried only before its first event.
import {
  clientRetryDelayMs,
  isConnectionError,
  retriedAsClient,
  streamRetriedAsClient,
  type ClientRetries,
} from '../../lib/internal/clientRetries';

/** Retries recording what the mirror was told; the server's retry-after-ms of 0 keeps the test from waiting. */
function recorder(retries: number, gate: () => Promise<void> = async () => undefined) {
  const log: string[] = [];
  const r: ClientRetries = {
    retries,
    wouldRetry: (error) => (error as { status?: number }).status !== 400,
    failed: (error, delayMs) => log.push(`failed ${(error as { status?: number }).status} after ${delayMs} ms`),
    gate: async () => {
      log.push('gate');
      await gate();
    },
  };
  return { r, log };
}
const failure = (status: number) =>
  Object.assign(new Error(`${status}`), { status, headers: new Headers({ 'retry-after-ms': '0' }) });

describe('retriedAsClient', () => {
  it('sends, and on a failure the client would retry charges it, waits its delay and gates the retry', async () => {
    const { r, log } = recorder(6);
    let sent = 0;
    const out = await retriedAsClient(async () => {
      sent += 1;
      if (sent < 3) throw failure(500);
      return 'ok';
    }, r);
    expect(out).toBe('ok');
    expect(sent).toBe(3);
    expect(log).toEqual(['failed 500 after 0 ms', 'gate', 'failed 500 after 0 ms', 'gate']);
  });

  it("stops at the client's retries, and at a failure it would not retry, rejecting with it uncharged", async () => {
    const { r, log } = recorder(1);
    await expect(retriedAsClient(() => Promise.reject(failure(500)), r)).rejects.toMatchObject({ status: 500 });
    expect(log).toEqual(['failed 500 after 0 ms', 'gate']);
    const second = recorder(6);
    await expect(retriedAsClient(() => Promise.reject(failure(400)), second.r)).rejects.toMatchObject({ status: 400 });
    expect(second.log).toEqual([]);
  });

  it("rejects with the mirror's stop when the retry is refused, and sends nothing more", async () => {
    const stop = new Error('budget exceeded');
    const { r } = recorder(6, () => Promise.reject(stop));
    let sent = 0;
    await expect(
      retriedAsClient(async () => {
        sent += 1;
        throw failure(500);
      }, r),
    ).rejects.toBe(stop);
    expect(sent).toBe(1);
  });

  it('retries nothing once its signal has aborted', async () => {
    const controller = new AbortController();
    controller.abort();
    const { r, log } = recorder(6);
    await expect(
      retriedAsClient(() => Promise.reject(failure(500)), { ...r, signal: controller.signal }),
    ).rejects.toMatchObject({
      status: 500,
    });
    expect(log).toEqual([]);
  });
});

describe('streamRetriedAsClient', () => {
  it('retries a stream that failed before its first event, never one that broke off', async () => {
    const { r, log } = recorder(6);
    let opened = 0;
    const events: string[] = [];
    const stream = streamRetriedAsClient(async function* () {
      opened += 1;
      if (opened === 1) throw failure(503);
      yield 'a';
      throw failure(502);
    }, r);
    await expect(
      (async () => {
        for await (const e of stream) events.push(e);
      })(),
    ).rejects.toMatchObject({ status: 502 });
    expect(opened).toBe(2);
    expect(events).toEqual(['a']);
    expect(log).toEqual(['failed 503 after 0 ms', 'gate']);
  });
});

describe('clientRetryDelayMs', () => {
  const after = (headers: Record<string, string>) => ({ headers: new Headers(headers) });
  it("waits as the openai client does: the server's retry-after-ms or retry-after, else 0.5 s doubling to 8 s less up to a quarter", () => {
    expect(clientRetryDelayMs(after({ 'retry-after-ms': '120' }), 0)).toBe(120);
    expect(clientRetryDelayMs(after({ 'retry-after': '2' }), 0)).toBe(2000);
    expect(clientRetryDelayMs({ headers: { 'retry-after': '2' } }, 0)).toBe(2000);
    // Past a minute, the server's word is not taken.
    expect(clientRetryDelayMs(after({ 'retry-after': '120' }), 0, () => 0)).toBe(500);
    expect(clientRetryDelayMs(new Error('x'), 1, () => 0)).toBe(1000);
    expect(clientRetryDelayMs(new Error('x'), 1, () => 1)).toBe(750);
    expect(clientRetryDelayMs(undefined, 9, () => 0)).toBe(8000);
  });
});

describe('isConnectionError', () => {
  it("tells the openai client's connection errors by class name, and a timeout LangChain rewrapped", () => {
    class APIConnectionError extends Error {}
    class APIConnectionTimeoutError extends APIConnectionError {}
    expect(isConnectionError(new APIConnectionTimeoutError('t'))).toBe(true);
    expect(isConnectionError(Object.assign(new Error('t'), { name: 'TimeoutError' }))).toBe(true);
    expect(isConnectionError(new Error('x'))).toBe(false);
    expect(isConnectionError(undefined)).toBe(false);
  });
});
