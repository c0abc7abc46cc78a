import type { LLMCallBound, Pricing } from '../AgentLoop';
import { worstCaseCost } from './worstCaseCost';

/**
 * The most output tokens, between `floor` and `bound.maxOutputTokens` (both included), whose
 * worst case fits in `roomUsd`, or undefined when even `floor` does not. Binary search: the
 * cost of a call never falls as its output grows (pricing is taken to be monotone).
 */
export function outputTokensThatFit(
  bound: LLMCallBound,
  pricing: Pricing | undefined,
  roomUsd: number,
  floor: number,
): number | undefined {
  const fits = (n: number): boolean => {
    const worst = worstCaseCost({ ...bound, maxOutputTokens: n }, pricing);
    return worst.costUsd !== undefined && worst.costUsd <= roomUsd;
  };
  let lo = Math.min(floor, bound.maxOutputTokens);
  if (!fits(lo)) return undefined;
  let hi = bound.maxOutputTokens;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (fits(mid)) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}
