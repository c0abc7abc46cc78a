import type { Pricing } from '../AgentLoop';
import type { UsageMeter } from '../money/UsageMeter';
import { reserveLLMCall, type PlannedCall, type ReserveOutcome } from './reserveLLMCall';

/**
 * The in-process gate of one LLM attempt, the adapter's and the mirror's: the budgets checked,
 * then the hold this call takes the place of let go (`handOver`: the final call's hold; a
 * refused call leaves it held until the run ends), then the attempt's worst case held against
 * strict caps (`reserveLLMCall`; lowered to what fits down to `minOutputTokens`, `Infinity` for
 * a request that must fit whole). No await from the check to the hold: runs sharing a budget
 * are counted one by one. Returns what is held, or the limit that refuses the call (nothing held).
 */
export function holdAttempt(
  meter: UsageMeter,
  pricing: Pricing | undefined,
  minOutputTokens: number,
  planned: PlannedCall | undefined,
  handOver: (() => void) | undefined,
): ReserveOutcome {
  const spent = meter.spent();
  if (spent !== undefined) return { kind: 'budget', spent };
  handOver?.();
  return reserveLLMCall(meter, pricing, minOutputTokens, planned);
}
