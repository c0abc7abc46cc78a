/**
 * Which failed requests the providers bill: data, with its source. A failure a row marks
 * `released` is provably not billed, so its hold is let go; anything no row matches may have
 * been billed and stays uncertain, charged at its hold. Users replace rows by status
 * (`billingRules(overrides)`).
 */

import { InvalidArgumentError } from '../../machine/InvalidArgumentError';

/** Whether a failed request may have been billed. */
export type FailureBilling = 'released' | 'uncertain';

/** One row: a response status, what it means for the bill, and where the provider says so. */
export interface BillingRule {
  /** The HTTP status of the failed response. */
  readonly status: number;
  readonly billing: FailureBilling;
  /** The providers whose documentation the row follows. */
  readonly providers: readonly string[];
  /** Why, in words: what the provider says the status means. */
  readonly why: string;
  /** Where the provider documents it. */
  readonly source: string;
}

const OPENAI_ERRORS = 'https://platform.openai.com/docs/guides/error-codes';
const ANTHROPIC_ERRORS = 'https://docs.anthropic.com/en/api/errors';
const AZURE_429 =
  'https://learn.microsoft.com/en-us/answers/questions/1632971/does-azure-open-ai-charge-for-ratelimit-error-or-a';

/**
 * The default rows. Each is a response the provider returns before any model work is done: the
 * request was refused (rate limit, overload, authentication, validation), so no tokens were
 * processed and none are billed. 5xx other than Anthropic's 529 overload may come after work
 * was done, and a stream that failed after its 200 may have been billed: those stay uncertain.
 */
export const PROVIDER_BILLING: readonly BillingRule[] = Object.freeze([
  {
    status: 400,
    billing: 'released',
    providers: ['openai', 'anthropic'],
    why: 'the request was refused as invalid before the model ran (invalid_request_error)',
    source: `${OPENAI_ERRORS}; ${ANTHROPIC_ERRORS}`,
  },
  {
    status: 401,
    billing: 'released',
    providers: ['openai', 'anthropic'],
    why: 'the request was refused for its credentials (authentication_error)',
    source: `${OPENAI_ERRORS}; ${ANTHROPIC_ERRORS}`,
  },
  {
    status: 403,
    billing: 'released',
    providers: ['openai', 'anthropic'],
    why: 'the request was refused for its permissions (permission_error)',
    source: `${OPENAI_ERRORS}; ${ANTHROPIC_ERRORS}`,
  },
  {
    status: 404,
    billing: 'released',
    providers: ['openai', 'anthropic'],
    why: 'the model or resource was not found (not_found_error)',
    source: `${OPENAI_ERRORS}; ${ANTHROPIC_ERRORS}`,
  },
  {
    status: 413,
    billing: 'released',
    providers: ['anthropic'],
    why: 'the request was refused as too large before the model ran (request_too_large)',
    source: ANTHROPIC_ERRORS,
  },
  {
    status: 429,
    billing: 'released',
    providers: ['openai', 'anthropic'],
    why: 'the request was refused by a rate or spend limit before the model ran (rate_limit_error); 429s incur no charge',
    source: `${OPENAI_ERRORS}; ${ANTHROPIC_ERRORS}; ${AZURE_429}`,
  },
  {
    status: 529,
    billing: 'released',
    providers: ['anthropic'],
    why: 'the API was overloaded and refused the request (overloaded_error)',
    source: ANTHROPIC_ERRORS,
  },
]);

/**
 * The default rows with `overrides` in place of those of the same status (a row of a status the
 * defaults lack is added). Refuses a row that is not one, naming it.
 */
export function billingRules(overrides: readonly BillingRule[] = []): readonly BillingRule[] {
  if (!Array.isArray(overrides))
    throw new InvalidArgumentError(
      'billing',
      'an array of rows { status, billing, providers, why, source }',
      overrides,
    );
  for (const row of overrides) {
    const r = row as Partial<BillingRule> | null;
    if (
      typeof r !== 'object' ||
      r === null ||
      !Number.isInteger(r.status) ||
      r.status! < 100 ||
      r.status! > 599 ||
      (r.billing !== 'released' && r.billing !== 'uncertain')
    )
      throw new InvalidArgumentError(
        `billing[${overrides.indexOf(row)}]`,
        "a row { status: an HTTP status 100–599, billing: 'released' | 'uncertain', providers, why, source }",
        row,
      );
  }
  const replaced = new Set(overrides.map((r) => r.status));
  return Object.freeze([...PROVIDER_BILLING.filter((r) => !replaced.has(r.status)), ...overrides]);
}

/** How deep a chain of causes is followed (an SDK's error wraps fetch's, which wraps the response's). */
const MAX_CAUSES = 8;

/**
 * The HTTP status a failed request's error carries: `status` (openai, @anthropic-ai/sdk,
 * LangChain), `statusCode` (the AI SDK's APICallError), or `response.status`, on the error or a
 * cause it wraps. Undefined when none does (no response came back, or it is not said).
 */
export function failureStatus(error: unknown, depth = 0): number | undefined {
  if (typeof error !== 'object' || error === null || depth > MAX_CAUSES) return undefined;
  const e = error as { status?: unknown; statusCode?: unknown; response?: { status?: unknown }; cause?: unknown };
  for (const s of [e.status, e.statusCode, e.response?.status])
    if (typeof s === 'number' && Number.isInteger(s) && s >= 100 && s <= 599) return s;
  return failureStatus(e.cause, depth + 1);
}

/** The row that says a failed request with `error` was not billed, or undefined when it may have been. */
export function releasedBy(error: unknown, rules: readonly BillingRule[]): BillingRule | undefined {
  const status = failureStatus(error);
  if (status === undefined) return undefined;
  const row = rules.find((r) => r.status === status);
  return row?.billing === 'released' ? row : undefined;
}
