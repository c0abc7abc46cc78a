import { isContextOverflow } from './isContextOverflow';
import type { RetryOptions } from './retryDelay';

function header(headers: unknown, name: string): string | undefined {
  if (typeof headers !== 'object' || headers === null) return undefined;
  // A fetch `Headers` object (openai's APIError) or a plain record (the AI SDK's responseHeaders).
  if (typeof (headers as { get?: unknown }).get === 'function') {
    try {
      const value: unknown = (headers as { get: (n: string) => unknown }).get(name);
      return typeof value === 'string' ? value : undefined;
    } catch {
      return undefined;
    }
  }
  for (const [key, value] of Object.entries(headers as Record<string, unknown>)) {
    if (key.toLowerCase() === name)
      return typeof value === 'string'
        ? value
        : Array.isArray(value) && typeof value[0] === 'string'
          ? value[0]
          : typeof value === 'number'
            ? String(value)
            : undefined;
  }
  return undefined;
}

/**
 * How long the server asked to wait before a retry, in ms, from what SDK errors carry: a
 * `retryAfterMs` number, or `headers` / `responseHeaders` (a `Headers` object or a plain
 * record) with `retry-after-ms` or `retry-after` (seconds or an HTTP date). Pure but for `now`.
 */
export function retryAfterMs(error: unknown, now: number): number | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const e = error as {
    retryAfterMs?: unknown;
    headers?: unknown;
    responseHeaders?: unknown;
    response?: { headers?: unknown };
  };
  if (typeof e.retryAfterMs === 'number' && Number.isFinite(e.retryAfterMs) && e.retryAfterMs >= 0)
    return e.retryAfterMs;
  for (const headers of [e.headers, e.responseHeaders, e.response?.headers]) {
    const ms = header(headers, 'retry-after-ms');
    if (ms !== undefined && ms.trim() !== '' && Number.isFinite(Number(ms)) && Number(ms) >= 0) return Number(ms);
    const after = header(headers, 'retry-after');
    if (after === undefined || after.trim() === '') continue;
    const seconds = Number(after);
    if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
    const date = Date.parse(after);
    if (Number.isFinite(date)) return Math.max(0, date - now);
  }
  return undefined;
}

const RETRYABLE_STATUS = new Set([408, 409, 425, 429]);

/**
 * The default `retry.shouldRetry`: an error with an HTTP status (`status`, as openai's
 * APIError, or `statusCode`, as the AI SDK's APICallError) is retried only for 408, 409, 425,
 * 429 and ≥ 500; one without a status (a reset connection, a dropped stream) is retried; an
 * abort never.
 */
export function defaultShouldRetry(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return true;
  const e = error as { name?: unknown; status?: unknown; statusCode?: unknown };
  // openai's APIUserAbortError keeps the name 'Error': its class name tells it.
  const cls = (error as { constructor?: { name?: unknown } }).constructor?.name;
  if (e.name === 'AbortError' || e.name === 'APIUserAbortError' || cls === 'APIUserAbortError') return false;
  // The same request overflows the context again: only compaction (the `compact` option) helps.
  if (isContextOverflow(error)) return false;
  const status = typeof e.status === 'number' ? e.status : typeof e.statusCode === 'number' ? e.statusCode : undefined;
  if (status === undefined) return true;
  return RETRYABLE_STATUS.has(status) || status >= 500;
}

/** Resolved retry options, as the turn uses them. */
export type ResolvedRetry = Required<Omit<RetryOptions, 'delayMs'>> & Pick<RetryOptions, 'delayMs'>;
