import type { Response } from 'openai/resources/responses/responses';
import type { Usage } from 'agent-state-machine';
import { mapResponsesUsage } from './mapResponsesUsage';

/**
 * A response the API failed after accepting the request: `status: 'failed'`, an `error`
 * event in the stream, or a status the loop cannot use (`cancelled`, `queued`). `code` is the
 * API's error code; `status` is the HTTP status the same failure gets outside a stream, when
 * the code tells it (429 for a rate limit, 500 for a server error, 400 for a rejected prompt
 * or image), so the adapter's retry policy treats both alike; otherwise undefined, and the
 * failure is retried as a dropped connection is.
 */
export class OpenAIResponseError extends Error {
  override readonly name = 'OpenAIResponseError';
  /** The API's error code (`server_error`, `rate_limit_exceeded`, `invalid_prompt`, …), or null. */
  readonly code: string | null;
  /** The HTTP status of the same failure outside a stream, when the code tells it. */
  readonly status: number | undefined;
  /** The request parameter the API blames, if any. */
  readonly param: string | null;
  /** The failed response's id, when it is known. */
  readonly responseId: string | undefined;
  /**
   * The usage of an answer the loop refused (an item it cannot act on), or that a failed
   * response reported: the provider billed it, so the attempt is charged at it, not by the
   * failure rule (a 400 would read as unbilled, a 500 as uncertain at its hold).
   */
  readonly answeredUsage: Usage | undefined;
  /** The model of that answer, to price its usage. */
  readonly model: string | undefined;

  constructor(
    message: string,
    details: {
      code?: string | null | undefined;
      param?: string | null | undefined;
      responseId?: string | undefined;
      cause?: unknown;
      answeredUsage?: Usage | undefined;
      model?: string | undefined;
    } = {},
  ) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.code = details.code ?? null;
    this.param = details.param ?? null;
    this.responseId = details.responseId;
    this.answeredUsage = details.answeredUsage;
    this.model = details.model;
    this.status = httpStatusOf(this.code);
  }
}

const PROMPT_CODES = new Set([
  'invalid_prompt',
  'bio_policy',
  'data_residency_mismatch',
  'context_length_exceeded',
  'invalid_base64_image',
  'unsupported_image_media_type',
  'empty_image_file',
  'failed_to_download_image',
]);

function httpStatusOf(code: string | null): number | undefined {
  if (code === null) return undefined;
  if (code === 'rate_limit_exceeded' || code === 'too_many_requests') return 429;
  if (code === 'server_error' || code === 'vector_store_timeout') return 500;
  // The loop's own refusal of an item it cannot act on (refuseClientActions): the same request
  // would ask for the same action again, so it is not retried, as a 400 is not.
  if (code === 'unsupported_client_action') return 400;
  if (PROMPT_CODES.has(code) || code.startsWith('image_') || code.startsWith('invalid_image')) return 400;
  return undefined;
}

/** The error of a response with `status: 'failed'`; the usage it reports, if any, is what was billed. */
export function failedResponseError(response: Response, cause?: unknown): OpenAIResponseError {
  const error = response.error as { code?: string | null; message?: string } | null | undefined;
  // A usage of no input is a placeholder, not a bill: the failure rule decides (uncertain, or released for a 429).
  const reported = mapResponsesUsage(response.usage, response.output ?? []);
  const answeredUsage = reported?.inputTokens ? reported : undefined;
  return new OpenAIResponseError(
    `the response failed (${error?.code ?? 'no code'}): ${error?.message ?? 'no message'}`,
    {
      code: error?.code,
      responseId: response.id,
      cause,
      ...(answeredUsage && { answeredUsage, model: response.model }),
    },
  );
}

/** An `error` event, as documented (`code`, `message`, `param` on the event) or as the API sends it (under `error`). */
export function errorEventError(event: object, responseId: string | undefined, cause?: unknown): OpenAIResponseError {
  const e = ((event as { error?: unknown }).error ?? event) as {
    code?: string | null;
    message?: string;
    param?: string | null;
    type?: string;
  };
  const code = e.code ?? e.type ?? null;
  return new OpenAIResponseError(
    `the response stream reported an error (${code ?? 'no code'}): ${e.message ?? 'no message'}`,
    { code, param: e.param, responseId, cause },
  );
}
