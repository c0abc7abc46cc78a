/**
 * The rule for what one LLM attempt costs once it has ended. Money that may have been spent
 * counts as spent: a request that left the process costs its reported usage, priced, when that
 * came back (billed), else its whole hold, its worst case (uncertain). Only a request that
 * provably was not billed releases its hold: one that never left (connection refused, no such
 * host), or one answered with a failure the provider documents as unbilled (`PROVIDER_BILLING`:
 * a 429, a 529, a request refused as invalid). The same rule as the ledger's: a `reserve` line
 * with no priced response after it counts at its worst case.
 */

import { failureMessage } from '../../internal/failureMessage';
import { PROVIDER_BILLING, releasedBy, type BillingRule } from './providerBilling';

/** How an attempt ended, as far as its cost goes. */
export type AttemptEnd =
  /** A response came back and its usage was priced (or reported its cost). */
  | { kind: 'priced'; costUsd: number }
  /** A response came back but its cost is unknown: `why` (an unknown model, pricing that threw, no usage). */
  | { kind: 'unpriced'; why: string }
  /** No response: the attempt failed with `error` (or was abandoned), sent or not. */
  | { kind: 'failed'; error: unknown };

/** What an ended attempt is charged. */
export type AttemptCharge =
  | { kind: 'priced'; costUsd: number }
  /** Charged its whole hold, uncertain money: the request may have been billed and its cost is unknown. */
  | { kind: 'hold'; costUsd: number; reason: string }
  /** Nothing charged, the hold (`releasedUsd`, when one was computed) let go: the request was provably not billed. */
  | { kind: 'release'; reason: string; releasedUsd?: number }
  /** It may have been billed, but no worst case was computed (no strict cap, ledger or external dollar cap): nothing to charge. */
  | { kind: 'unknown'; reason: string };

/**
 * Pure: what an attempt that ended as `end` costs, given its hold (its worst case in USD,
 * undefined when none was computed) and which failures are not billed (`billing`).
 */
export function chargeAttempt(
  end: AttemptEnd,
  holdUsd: number | undefined,
  billing: readonly BillingRule[] = PROVIDER_BILLING,
): AttemptCharge {
  if (end.kind === 'priced') return { kind: 'priced', costUsd: end.costUsd };
  let why: string;
  if (end.kind === 'unpriced') why = end.why;
  else {
    const never = neverSent(end.error);
    const unbilled = never === undefined ? releasedBy(end.error, billing) : undefined;
    const reason =
      never !== undefined
        ? `the request never left: ${never}`
        : unbilled !== undefined
          ? `answered ${unbilled.status}, not billed: ${unbilled.why}`
          : undefined;
    if (reason !== undefined)
      return holdUsd === undefined ? { kind: 'release', reason } : { kind: 'release', reason, releasedUsd: holdUsd };
    why = `it failed after the request may have left (${failureMessage(end.error)})`;
  }
  if (holdUsd === undefined) return { kind: 'unknown', reason: why };
  return { kind: 'hold', costUsd: holdUsd, reason: `charged at its hold: ${why}` };
}

/** Error codes that say no connection was made, so no request reached the provider. */
const NOT_CONNECTED: ReadonlySet<string> = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN']);

/** How deep a chain of causes is followed (an SDK's error wraps fetch's, which wraps the socket's). */
const MAX_CAUSES = 8;

/**
 * Why `error` proves the request never left the process (its code, on it or on a cause it
 * wraps: `ECONNREFUSED`, `ENOTFOUND`, `EAI_AGAIN`), or undefined when it may have left.
 * An `AggregateError` (every address of a host tried) proves it only if each of its errors does.
 */
export function neverSent(error: unknown, depth = 0): string | undefined {
  if (typeof error !== 'object' || error === null || depth > MAX_CAUSES) return undefined;
  const e = error as { code?: unknown; cause?: unknown; errors?: unknown };
  if (typeof e.code === 'string' && NOT_CONNECTED.has(e.code)) return `connection failed (${e.code})`;
  if (Array.isArray(e.errors) && e.errors.length > 0) {
    const each = e.errors.map((inner) => neverSent(inner, depth + 1));
    if (each.every((why) => why !== undefined)) return each[0];
  }
  return neverSent(e.cause, depth + 1);
}

/** An attempt whose end was never reported (a framework retried, or the run ended, with it in flight): it may have left. */
export const UNREPORTED: AttemptEnd = Object.freeze({ kind: 'failed', error: new Error('its end was never reported') });
