import type { Usage } from '../AgentLoop';
import type { BoundExceeded } from '../boundExceeded';
import type { AttemptCharge } from '../money/chargeRule';
import { chargeResponse, type ResponseToCharge } from './chargeResponse';
import { endAttempt } from './endAttempt';

/**
 * The usage a failure carries when the provider answered the request, and billed it, but the
 * loop refused the answer (an item it cannot act on, say): `answeredUsage` on the error, with
 * the answer's `model`. Undefined for any other failure.
 */
function answeredUsageOf(error: unknown): { usage: object; model: unknown } | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const e = error as { answeredUsage?: unknown; model?: unknown };
  const usage = e.answeredUsage;
  return typeof usage === 'object' && usage !== null ? { usage, model: e.model } : undefined;
}

/**
 * What a failed attempt is charged, for both drivers: a refused answer that reports its usage
 * is billed at that usage, priced and checked against its bound as any answer is
 * (`chargeResponse`: `passed`, which a strict cap stops on); any other failure by the charge
 * rule (`endAttempt`: released, or its hold).
 */
export function chargeFailure(
  attempt: Omit<ResponseToCharge, 'value'>,
  error: unknown,
): { charge: AttemptCharge; usage: Usage | undefined; passed: BoundExceeded | undefined } {
  const answered = answeredUsageOf(error);
  if (answered === undefined)
    return {
      charge: endAttempt(attempt.meter, attempt.held, { kind: 'failed', error }),
      usage: undefined,
      passed: undefined,
    };
  const { charge, valid, passed } = chargeResponse({ ...attempt, value: answered });
  return { charge, usage: valid, passed };
}
