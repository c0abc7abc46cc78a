/**
 * Whether an LLM call's error says the request was longer than the model's context, as each
 * provider says it:
 * - OpenAI (Chat Completions and Responses, and the `openai` SDK's `APIError`): code
 *   `context_length_exceeded` (on the error, or in its body's `error.code`);
 * - Anthropic (`@anthropic-ai/sdk`): HTTP 400 `invalid_request_error` whose message starts
 *   `prompt is too long`;
 * - the AI SDK: an `APICallError` (or a `RetryError` whose last error is one) whose
 *   `responseBody` or `data` carries either of the above — the AI SDK has no error type of its
 *   own for an overflow, it passes the provider's body on.
 * Follows `cause`, `lastError` and `error` a few levels down. Pure.
 */
export function isContextOverflow(error: unknown): boolean {
  return overflowIn(error, 0);
}

const OVERFLOW_TEXT = /context_length_exceeded|prompt is too long/i;

function overflowIn(error: unknown, depth: number): boolean {
  if (depth > 4 || error === null || error === undefined) return false;
  if (typeof error === 'string') return OVERFLOW_TEXT.test(error);
  if (typeof error !== 'object') return false;
  const e = error as Record<string, unknown>;
  if (e['code'] === 'context_length_exceeded' || e['type'] === 'context_length_exceeded') return true;
  const message = e['message'];
  const status = typeof e['status'] === 'number' ? e['status'] : e['statusCode'];
  // Anthropic's wording, only on a 400 (or where no status is known: an error body itself).
  if (
    typeof message === 'string' &&
    /^(?:\d{3} )?.*prompt is too long/i.test(message) &&
    (status === undefined || status === 400)
  )
    return true;
  if (typeof message === 'string' && /context_length_exceeded/.test(message)) return true;
  const body = e['responseBody'];
  if (typeof body === 'string' && OVERFLOW_TEXT.test(body)) return true;
  for (const key of ['error', 'data', 'cause', 'lastError']) if (key in e && overflowIn(e[key], depth + 1)) return true;
  return false;
}
