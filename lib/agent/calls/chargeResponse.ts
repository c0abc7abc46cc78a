import type { Usage } from '../AgentLoop';
import type { AttemptCharge } from '../money/chargeRule';
import { endAttempt } from './endAttempt';
import { priceResponse, type OnUnknownCost, type PricedResponse } from '../money/priceResponse';
import type { Reservation } from './reserveLLMCall';
import type { UsageMeter } from '../money/UsageMeter';

/** A priced response and what its attempt was charged (`costUsd`: the USD charged, undefined when unknown). */
export interface ChargedResponse {
  priced: PricedResponse;
  charge: AttemptCharge;
  costUsd: number | undefined;
}

/**
 * An attempt's response: priced (`priceResponse`, by the caps `meter` has) and charged by the
 * rule (`endAttempt`) with the usage it reported. A response whose cost is unknown was billed
 * all the same: it is charged at its hold.
 */
export function chargeResponse(
  meter: UsageMeter,
  held: Reservation,
  usage: Usage,
  model: string | undefined,
  operation: string,
  policy: { pricing: PricedPolicy['pricing']; onUnknownCost: OnUnknownCost },
): ChargedResponse {
  const priced = priceResponse(usage, model, operation, {
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
      : { kind: 'unpriced', why: unknownCost(model, priced) },
    usage,
  );
  return { priced, charge, costUsd: charge.kind === 'priced' || charge.kind === 'hold' ? charge.costUsd : undefined };
}

type PricedPolicy = Parameters<typeof priceResponse>[3];

/** Why a response is charged at its hold: said only for one whose cost is unknown (the string is not made on every response). */
function unknownCost(model: string | undefined, priced: PricedResponse): string {
  // Pricing that threw says why; the unknown-cost error itself would only repeat it.
  const threw = priced.error?.operation === 'pricing' ? ` (${priced.error.message})` : '';
  return `the cost of ${model ?? '(model not reported)'} is unknown${threw}`;
}
