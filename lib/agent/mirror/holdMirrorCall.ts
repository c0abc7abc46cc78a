import type { LLMCallBound, Pricing } from '../AgentLoop';
import type { SpentLimit } from '../BudgetLimits';
import { NOTHING_RESERVED, planBoundedCall, reserveLLMCall, type Reservation } from '../calls/reserveLLMCall';
import { OperationError } from '../TurnError';
import { STRICT_FALSE } from '../UnboundedCallsError';
import type { UsageMeter } from '../money/UsageMeter';

/**
 * The in-process budget gate of a mirrored model call, as the adapter's callLLM makes it: the
 * attempt's worst case, priced from `bound` whenever one is given, held against strict caps (and
 * planned for external ones that cap dollars, the ledger's line, and the charge of a call that
 * comes back without usage). An OperationError: the call cannot be
 * planned (a strict cap without a bound or a price); else the limit spent, if any, and the hold.
 * Synchronous, so that nothing runs between the check and the hold.
 */
export function holdMirrorCall(
  meter: UsageMeter,
  pricing: Pricing | undefined,
  bound: LLMCallBound | undefined,
  whyNoBound: string | undefined,
): OperationError | { spent: SpentLimit | undefined; held: Reservation } {
  const strict = meter.strict;
  let planned: ReturnType<typeof planBoundedCall> | undefined;
  // A bound given is priced (the integration gives one when `needsBound`): a call that comes back
  // without usage, or is cut at its bound, is then charged at its worst case, not $0.
  if (bound !== undefined) planned = planBoundedCall(bound, pricing, strict);
  else if (strict)
    planned = new OperationError(
      'modelCallStart',
      new Error(
        `a strict maxCostUsd needs the bound of each model call (modelCallStart({ inputTokens, maxOutputTokens, model }))${whyNoBound === undefined ? '' : `, and this call has none: ${whyNoBound}`}; no call is made (${STRICT_FALSE})`,
      ),
    );
  if (planned instanceof OperationError) return planned;
  const spent = meter.spent();
  if (spent !== undefined) return { spent, held: NOTHING_RESERVED };
  // Never lowered: the framework's request is made as it stands, so it must fit whole.
  const reserved = reserveLLMCall(meter, pricing, Infinity, planned);
  return reserved.kind === 'budget'
    ? { spent: reserved.spent, held: NOTHING_RESERVED }
    : { spent: undefined, held: reserved.reservation };
}
