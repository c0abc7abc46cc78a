import { sleep } from './sleep';

// The retries a model client makes on its own (the `openai` client's `maxRetries`, LangChain's
// AsyncCaller), made by a mirror instead. A client retries a failed request inside one call of
// the framework's model, where a mirror wrapping that model sees one attempt: each retry may be
// billed, and none would be gated or charged. So a mirror turns the client's retries off and
// makes them itself, here: each failed request is charged by its status as an attempt that
// will be retried (a 429 released, a 5xx uncertain at its hold, per the billing table), the
// retry waits as the client would, and is gated as a new attempt before it is sent.

/** One call's retries, made by the mirror: what is sent, when the client would retry, and how the mirror charges and gates. */
export interface ClientRetries {
  /** How many retries the client would have made (its `maxRetries`). */
  retries: number;
  /** Whether the client would retry after `error` (`retry` is 1 for the first retry). */
  wouldRetry(error: unknown, retry: number): boolean | Promise<boolean>;
  /** The failed request, to be retried after `delayMs`: charged by its status (`modelCallFailed(error, { willRetry: true, delayMs })`). */
  failed(error: unknown, delayMs: number): void;
  /** Gates the retry as a new attempt: throws the mirror's stop when it is refused. */
  gate(): Promise<void>;
  /** The call's signal: once it aborts, nothing is retried and no wait goes on. */
  signal?: AbortSignal;
}

/**
 * `send()` (one request, with the client's own retries off) and the retries the client would
 * have made after it, each charged and gated by the mirror. Rejects with the last request's
 * error (not charged here: the caller reports a call's last failure as it reports any other),
 * or with the mirror's stop when a retry is refused.
 */
export async function retriedAsClient<T>(send: () => Promise<T>, retries: ClientRetries): Promise<T> {
  for (let retry = 0; ; retry++) {
    try {
      return await send();
    } catch (error) {
      if (!(await retryAfter(retries, error, retry))) throw error;
    }
  }
}

/**
 * The events of `open()` (one streamed request, with the client's own retries off), retried as
 * the client would while no event has come (a client retries the request that failed before
 * its stream began, never a stream that broke off).
 */
export async function* streamRetriedAsClient<E>(
  open: () => AsyncIterable<E>,
  retries: ClientRetries,
): AsyncGenerator<E, void, undefined> {
  for (let retry = 0; ; retry++) {
    let events = 0;
    try {
      for await (const event of open()) {
        events += 1;
        yield event;
      }
      return;
    } catch (error) {
      if (events > 0 || !(await retryAfter(retries, error, retry))) throw error;
    }
  }
}

/** Whether request `retry` (0 for the first) failing with `error` is retried: if so, it is charged, waited on and the retry gated. */
async function retryAfter(retries: ClientRetries, error: unknown, retry: number): Promise<boolean> {
  const { signal } = retries;
  if (signal?.aborted === true || !(retry < retries.retries) || !(await retries.wouldRetry(error, retry + 1)))
    return false;
  const delayMs = clientRetryDelayMs(error, retry);
  retries.failed(error, delayMs);
  await sleep(delayMs, signal);
  await retries.gate();
  return true;
}

/**
 * The `openai` client's connection errors (`APIConnectionError`, `APIConnectionTimeoutError`),
 * by class name (a framework may load its own copy of `openai`), and a timeout a framework
 * rewrapped (`TimeoutError`, as LangChain does).
 */
export function isConnectionError(error: unknown): boolean {
  if ((error as { name?: unknown } | null)?.name === 'TimeoutError') return true;
  for (let proto = error; typeof proto === 'object' && proto !== null; proto = Object.getPrototypeOf(proto)) {
    const name = (proto as { constructor?: { name?: unknown } }).constructor?.name;
    if (name === 'APIConnectionError') return true;
  }
  return false;
}

/**
 * How long the client would wait before retry `retry` (0 for the first): the server's
 * `retry-after-ms` or `retry-after` (up to a minute), else the `openai` client's backoff — 0.5 s
 * doubling to at most 8 s, less up to a quarter at random.
 */
export function clientRetryDelayMs(error: unknown, retry: number, random: () => number = Math.random): number {
  const ms = Number.parseFloat(headerOf(error, 'retry-after-ms') ?? '');
  if (Number.isFinite(ms) && ms >= 0 && ms < 60_000) return ms;
  const after = headerOf(error, 'retry-after');
  if (after !== undefined) {
    const seconds = Number.parseFloat(after);
    const wait = Number.isFinite(seconds) ? seconds * 1000 : Date.parse(after) - Date.now();
    if (Number.isFinite(wait) && wait >= 0 && wait < 60_000) return wait;
  }
  return Math.min(0.5 * 2 ** retry, 8) * (1 - random() * 0.25) * 1000;
}

/** A response header the error carries (`Headers` or a plain record). */
function headerOf(error: unknown, key: string): string | undefined {
  const headers = (error as { headers?: unknown } | null)?.headers;
  if (typeof headers !== 'object' || headers === null) return undefined;
  const value =
    typeof (headers as Headers).get === 'function'
      ? (headers as Headers).get(key)
      : (headers as Record<string, unknown>)[key];
  return typeof value === 'string' ? value : undefined;
}
