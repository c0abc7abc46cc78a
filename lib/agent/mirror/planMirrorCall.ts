import type { LLMCallBound, Pricing } from '../AgentLoop';
import { planBoundedCall, type PlannedCall } from '../calls/reserveLLMCall';
import { OperationError } from '../TurnError';
import { STRICT_FALSE } from '../UnboundedCallsError';

/**
 * A mirrored model call's plan, as the adapter's `boundLLMCall` makes it from its loop's bound:
 * the attempt's worst case, priced from the `bound` the framework gave whenever it gave one
 * (held against strict caps, planned for external ones that cap dollars, stated in the ledger's
 * line, and charged to a call that comes back without usage: never $0). Undefined: no bound, and
 * no strict cap needs one. An OperationError: a strict cap without a bound or a price.
 */
export function planMirrorCall(
  pricing: Pricing | undefined,
  strict: boolean,
  bound: LLMCallBound | undefined,
  whyNoBound: string | undefined,
): PlannedCall | OperationError | undefined {
  if (bound !== undefined) return planBoundedCall(bound, pricing, strict);
  if (!strict) return undefined;
  return new OperationError(
    'modelCallStart',
    new Error(
      `a strict maxCostUsd needs the bound of each model call (modelCallStart({ inputTokens, maxOutputTokens, model }))${whyNoBound === undefined ? '' : `, and this call has none: ${whyNoBound}`}; no call is made (${STRICT_FALSE})`,
    ),
  );
}
