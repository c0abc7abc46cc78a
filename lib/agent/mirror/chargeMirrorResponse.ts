import { safeLog, type AgentLogger } from '../AgentLogger';
import type { LLMResponse, Pricing, Usage } from '../AgentLoop';
import { boundExceeded, boundExceededWords, type BoundExceeded } from '../boundExceeded';
import type { AttemptCharge } from '../money/chargeRule';
import { chargeResponse } from '../calls/chargeResponse';
import { splitUsage } from '../turn/checkAgentOutput';
import type { OnUnknownCost, PricedResponse } from '../money/priceResponse';
import type { Reservation } from '../calls/reserveLLMCall';
import type { RunRecording } from '../journal/RunRecording';
import { chargeServedResponse } from '../calls/serveRecorded';
import type { UsageMeter } from '../money/UsageMeter';

/** What a mirror needs to charge a response, beside the meter and the attempt's hold. */
export interface MirrorPricing {
  pricing: Pricing | undefined;
  onUnknownCost: OnUnknownCost;
  logger: AgentLogger | undefined;
  /** With `resumeFrom`: what serves recorded responses, and whether served ones are charged (no earlier usage given). */
  recording: RunRecording | undefined;
  chargesServed: boolean;
}

/** A response's usage (checked), price and charge, and whether it passed its bound. */
export interface MirrorCharge {
  valid: Usage;
  problems: readonly string[];
  priced: PricedResponse;
  charge: AttemptCharge;
  passed: BoundExceeded | undefined;
}

/**
 * Charges a model response by the rule: a live one against its hold (`chargeResponse`), a
 * served one (`served`, from the journal) at its recorded cost; warns when a live one used more
 * than its bound allowed (output, input or cost) and no strict cap stops the run.
 */
export function chargeMirrorResponse(
  meter: UsageMeter,
  held: Reservation,
  served: { costUsd: number | undefined } | undefined,
  response: LLMResponse,
  at: { operation: 'sendUserMessage' | 'sendToolResults'; turn: number },
  policy: MirrorPricing,
): MirrorCharge {
  const { valid, problems } = splitUsage(response.usage);
  const worstUsd = held.worstUsd;
  const { priced, charge, costUsd } =
    served !== undefined
      ? {
          ...chargeServedResponse(
            policy.chargesServed ? meter : undefined,
            policy.recording!,
            response,
            served.costUsd,
          ),
          costUsd: served.costUsd,
        }
      : chargeResponse(meter, held, valid, response.model, at.operation, {
          pricing: policy.pricing,
          onUnknownCost: policy.onUnknownCost,
        });
  // A served response was made under the earlier attempt's hold, not this one's: no bound to check.
  const passed = served === undefined ? boundExceeded(held.bound, valid, costUsd, worstUsd) : undefined;
  if (passed !== undefined && !meter.tripsOnBound)
    safeLog(
      policy.logger,
      'warn',
      `${at.operation} passed its bound: ${boundExceededWords(passed)} (the bound given to modelCallStart or pricing is too low)`,
      { turn: at.turn },
    );
  return { valid, problems, priced, charge, passed };
}
