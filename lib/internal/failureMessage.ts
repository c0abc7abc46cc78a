import { messageOf } from './messageOf';

/**
 * The HTTP status an SDK error carries: `status` (openai's and Anthropic's APIError) or
 * `statusCode` (the AI SDK's APICallError), when it is one (100 to 599).
 */
export function errorStatus(error: unknown): number | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  let status: unknown;
  try {
    const e = error as { status?: unknown; statusCode?: unknown };
    status = typeof e.status === 'number' ? e.status : e.statusCode;
  } catch {
    return undefined;
  }
  return typeof status === 'number' && Number.isInteger(status) && status >= 100 && status <= 599 ? status : undefined;
}

/**
 * The message of a failed call, as a failure record and a run's reason say it: with its HTTP
 * status in front (`429 Rate limit reached`) when the error has one its message does not
 * already start with. openai's APIError writes it into its message; the AI SDK's APICallError
 * keeps it apart in `statusCode`, so that its runs read the same as the others.
 */
export function failureMessage(error: unknown): string {
  const text = messageOf(error);
  const status = errorStatus(error);
  if (status === undefined || text.startsWith(String(status))) return text;
  return text === '' ? String(status) : `${status} ${text}`;
}
