import { formatUsd } from '../../internal/formatUsd';
import type { UsageMeter } from '../money/UsageMeter';

/**
 * Before an ordinary call under `budget.wrapUp`, for the adapter and the mirror alike: the final
 * call's hold (`finalUsd`) beside the call's worst case (`nextUsd`). Under a strict cap the
 * hold stays in the budgets from call to call, grown or shrunk from `heldUsd` to this
 * call's, and is let go of only when the final call takes its place, so no other run can take it;
 * under another cap the room left is checked. Returns the USD now held, or why the call does not
 * fit beside it (the run then wraps up, the hold kept). No await: no other run
 * takes the room between this and the call's own hold.
 */
export function holdFinalCall(
  meter: UsageMeter,
  heldUsd: number,
  finalUsd: number,
  nextUsd: number,
): number | { refused: string } {
  if (meter.strict) {
    if (finalUsd > heldUsd) {
      const refused = meter.hold(finalUsd - heldUsd);
      if (refused !== undefined) return { refused: refused.message };
    } else if (finalUsd < heldUsd) meter.release(heldUsd - finalUsd, undefined);
    return finalUsd;
  }
  const room = meter.costRoom;
  if (nextUsd + finalUsd > room)
    return {
      refused: `the next LLM call may cost up to ${formatUsd(nextUsd)}, which does not fit beside the final call's ${formatUsd(finalUsd)} in the ${formatUsd(Math.max(0, room))} left`,
    };
  return heldUsd;
}
