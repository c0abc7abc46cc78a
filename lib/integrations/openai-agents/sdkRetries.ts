import {
  OpenAIChatCompletionsModel,
  OpenAIResponsesModel,
  OpenAIResponsesWSModel,
  type Model,
  type ModelRequest,
  type ModelRetryAdviceRequest,
} from '@openai/agents';
import { isConnectionError } from '../../internal/clientRetries';

// The requests an OpenAI model of the Agents SDK makes on its own. Its `openai` client retries
// a failed request (twice by default: 408, 409, 429, 5xx, a connection error, a timeout) inside
// one `getResponse`, where a wrapped Model sees one call: each retry may be billed, and none
// would be gated or charged. The SDK's Runner turns those retries off when it retries itself
// (`_internal.runnerManagedRetry`, which its OpenAI models read as `maxRetries: 0`); the mirror
// does the same, and makes the client's retries itself (`retriedAsClient`, which the LangGraph
// mirror shares), each one gated and charged as an attempt.

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
