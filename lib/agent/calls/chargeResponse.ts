import { safeLog, type AgentLogger } from '../AgentLogger';
import type { Pricing, Usage } from '../AgentLoop';
import { boundExceeded, boundExceededWords, type BoundExceeded } from '../boundExceeded';
import type { AttemptCharge } from '../money/chargeRule';
import { endAttempt } from './endAttempt';
import { priceResponse, type OnUnknownCost, type PricedResponse } from '../money/priceResponse';
import type { Reservation } from './reserveLLMCall';
import { splitUsage } from '../turn/checkAgentOutput';
import type { UsageMeter } from '../money/UsageMeter';

/** What charging a response needs beside the meter and the attempt's hold: the same for both drivers. */
export interface ChargePolicy {
  pricing: Pricing | undefined;
  onUnknownCost: OnUnknownCost;
  logger: AgentLogger | undefined;
}

/**
 * A response's usage (its valid fields, and the problems with the rest), its price, what its
 * attempt was charged (`costUsd`: the USD charged, undefined when unknown) and whether it passed
 * its bound.
 */
export interface ChargedResponse {
  valid: Usage;
  problems: readonly string[];
  priced: PricedResponse;
  charge: AttemptCharge;
  costUsd: number | undefined;
  /** Output, input or cost past what the request's bound allowed: a fact for its line, a strict cap's stop. */
  passed: BoundExceeded | undefined;
}

/** One answered attempt to charge: whose meter, its hold, the response, and who gave its bound. */
export interface ResponseToCharge {
  meter: UsageMeter;
  held: Reservation;
  /** The response as the loop or the framework returned it, malformed or not. */
  value: unknown;
  operation: string;
  turn: number;
  /** Who gave the request's bound, for the warning when a response passes it: "the loop's llmCallBound". */
  boundBy: string;
  policy: ChargePolicy;
}

/**
 * The one charge of an answered attempt, for the adapter, its hooks and the mirror alike: the
 * usage `value` reports (it was paid for even if the rest is malformed) split from its problems,
 * priced (`priceResponse`, by the caps `meter` has) and charged by the rule (`endAttempt`); a
 * response whose cost is unknown was billed all the same, so it is charged at its hold. A
 * response past its bound warns (`boundBy`: who gave the bound) when no strict cap stops the run
 * on it: the caller trips the meter then, as only it knows how its run stops.
 */
export function chargeResponse({
  meter,
  held,
  value,
  operation,
  turn,
  boundBy,
  policy,
}: ResponseToCharge): ChargedResponse {
  const reported: unknown =
    typeof value === 'object' && value !== null ? (value as { usage?: unknown }).usage : undefined;
  const model: unknown = typeof value === 'object' && value !== null ? (value as { model?: unknown }).model : undefined;
  const { valid, problems } = splitUsage(reported);
  const named = typeof model === 'string' ? model : undefined;
  const priced = priceResponse(valid, named, operation, {
    pricing: policy.pricing,
    onUnknownCost: policy.onUnknownCost,
    capsCost: meter.caps('maxCostUsd'),
    capsTokens: meter.caps('maxTokens'),
  });
  const charge = endAttempt(
    meter,
    held,
    priced.costUsd !== undefined
      ? { kind: 'priced', costUsd: priced.costUsd }
      : { kind: 'unpriced', why: unknownCost(named, priced, policy.pricing !== undefined) },
    valid,
  );
  const costUsd = charge.kind === 'priced' || charge.kind === 'hold' ? charge.costUsd : undefined;
  const passed = boundExceeded(held.bound, valid, costUsd, held.worstUsd);
  // Past its bound with no strict cap to stop on it: a fact for the file, and a warning, as the run goes on past it.
  if (passed !== undefined && !meter.tripsOnBound)
    safeLog(
      policy.logger,
      'warn',
      `${operation} passed its bound: ${boundExceededWords(passed)} (${boundBy} or pricing is too low)`,
      { turn },
    );
  return { valid, problems, priced, charge, costUsd, passed };
}

/** Why a response is charged at its hold: said only for one whose cost is unknown (the string is not made on every response). */
function unknownCost(model: string | undefined, priced: PricedResponse, hasPricing: boolean): string {
  if (!hasPricing) return `no \`pricing\` was given, so the cost of ${model ?? '(model not reported)'} is unknown`;
  // Pricing that threw says why; the unknown-cost error itself would only repeat it.
  const threw = priced.error?.operation === 'pricing' ? ` (${priced.error.message})` : '';
  return `the cost of ${model ?? '(model not reported)'} is unknown${threw}`;
}
