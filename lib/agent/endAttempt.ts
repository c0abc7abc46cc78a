import { responseUsage } from '../internal/fieldLists';
import type { Usage } from './AgentLoop';
import { chargeAttempt, type AttemptCharge, type AttemptEnd } from './chargeRule';
import type { Reservation } from './reserveLLMCall';
import type { UsageMeter } from './UsageMeter';

/**
 * Ends an LLM attempt's hold by the charge rule (`chargeAttempt`): releases the hold, then
 * charges the meter what the attempt costs — its price, or its whole hold — with the usage
 * its response reported (`usage`, none for a failed attempt). Returns the charge.
 */
export function endAttempt(meter: UsageMeter, held: Reservation, end: AttemptEnd, usage?: Usage): AttemptCharge {
  // Only what is held is charged: without a strict or external dollar cap there is no hold, and
  // the cost of an attempt without a priced response stays unknown, as it always was.
  const holding = held.held > 0 || held.externalHold !== undefined;
  const charge = chargeAttempt(end, holding ? held.worstUsd : undefined);
  meter.release(held.held, held.externalHold);
  const costUsd = charge.kind === 'priced' || charge.kind === 'hold' ? charge.costUsd : undefined;
  // A failed attempt charged nothing adds nothing: no empty charge for external budgets to carry.
  if (usage !== undefined || costUsd !== undefined) meter.charge(responseUsage(usage, costUsd));
  return charge;
}

/** The fields of an attempt's journal (and ledger) line that say what it was charged: its cost, and why when that is its hold. */
export function chargeFields(charge: AttemptCharge): { costUsd?: number; chargedAtHold?: string } {
  if (charge.kind === 'hold') return { costUsd: charge.costUsd, chargedAtHold: charge.reason };
  return charge.kind === 'priced' ? { costUsd: charge.costUsd } : {};
}
