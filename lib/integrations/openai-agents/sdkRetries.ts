import {
  OpenAIChatCompletionsModel,
  OpenAIResponsesModel,
  OpenAIResponsesWSModel,
  type Model,
  type ModelRequest,
  type ModelRetryAdviceRequest,
} from '@openai/agents';

// The requests an OpenAI model of the Agents SDK makes on its own. Its `openai` client retries
// a failed request (twice by default: 408, 409, 429, 5xx, a connection error, a timeout) inside
// one `getResponse`, where a wrapped Model sees one call: each retry may be billed, and none
// would be gated or charged. The SDK's Runner turns those retries off when it retries itself
// (`_internal.runnerManagedRetry`, which its OpenAI models read as `maxRetries: 0`); the mirror
// does the same, and makes the client's retries itself, each one gated and charged as an attempt.

/** How many times the `openai` client retries a request by default (its `maxRetries`). */
export const CLIENT_RETRIES = 2;

/**
 * How many retries the mirror makes for `target` on `request`: the client's, for the SDK's
 * OpenAI models over HTTP (whose client retries it turns off); none for another model (its
 * requests are its own), a websocket one (the SDK does not retry those), or a request whose
 * retries the Runner makes (`modelSettings.retry`: the client's are off already, and the
 * Runner's retries come back through the mirror's model, gated there).
 */
export function retriesFor(target: Model, request: ModelRequest): number {
  if (runnerRetries(request)) return 0;
  if (target instanceof OpenAIResponsesWSModel) return 0;
  return target instanceof OpenAIResponsesModel || target instanceof OpenAIChatCompletionsModel ? CLIENT_RETRIES : 0;
}

/** `request` with the client's own retries off: every request the model sends is one `getResponse`. */
export function withoutClientRetries(request: ModelRequest): ModelRequest {
  const internal = (request as { _internal?: object })._internal;
  return Object.assign({}, request, { _internal: { ...internal, runnerManagedRetry: true } });
}

function runnerRetries(request: ModelRequest): boolean {
  return (request as { _internal?: { runnerManagedRetry?: unknown } })._internal?.runnerManagedRetry === true;
}

/**
 * Whether the client would have retried after `error`: the model's own advice (the SDK's, from
 * the status and `x-should-retry`), else a connection error or timeout, as the client retries.
 */
export async function clientWouldRetry(
  target: Model,
  request: ModelRequest,
  error: unknown,
  attempt: number,
): Promise<boolean> {
  if (request.signal?.aborted) return false;
  const advice = await target.getRetryAdvice?.({ error, attempt, stream: false, request } as ModelRetryAdviceRequest);
  if (advice !== undefined && advice !== null && typeof advice === 'object' && 'suggested' in advice)
    return advice.suggested === true;
  return isConnectionError(error);
}

/** The `openai` client's connection errors (`APIConnectionError`, `APIConnectionTimeoutError`), by class name: the SDK may load its own copy of `openai`. */
function isConnectionError(error: unknown): boolean {
  for (let proto = error; typeof proto === 'object' && proto !== null; proto = Object.getPrototypeOf(proto)) {
    const name = (proto as { constructor?: { name?: unknown } }).constructor?.name;
    if (name === 'APIConnectionError') return true;
  }
  return false;
}

/**
 * How long the client would wait before retry `retry` (0 for the first): the server's
 * `retry-after-ms` or `retry-after` (up to a minute), else its backoff — 0.5 s doubling to at
 * most 8 s, less up to a quarter at random.
 */
export function clientRetryDelayMs(error: unknown, retry: number, random: () => number = Math.random): number {
  const headers = (error as { headers?: unknown } | null)?.headers;
  const header = (key: string): string | null | undefined =>
    typeof (headers as Headers | undefined)?.get === 'function'
      ? (headers as Headers).get(key)
      : ((headers as Record<string, string> | undefined)?.[key] ?? undefined);
  const ms = Number.parseFloat(header('retry-after-ms') ?? '');
  if (Number.isFinite(ms) && ms >= 0 && ms < 60_000) return ms;
  const after = header('retry-after');
  if (after !== null && after !== undefined) {
    const seconds = Number.parseFloat(after);
    const wait = Number.isFinite(seconds) ? seconds * 1000 : Date.parse(after) - Date.now();
    if (Number.isFinite(wait) && wait >= 0 && wait < 60_000) return wait;
  }
  return Math.min(0.5 * 2 ** retry, 8) * (1 - random() * 0.25) * 1000;
}
