import { responseUsage } from '../../internal/fieldLists';
import type { Usage } from '../AgentLoop';
import { chargeAttempt, type AttemptCharge, type AttemptEnd } from '../money/chargeRule';
import type { Reservation } from './reserveLLMCall';
import type { UsageMeter } from '../money/UsageMeter';
import type { UsageDelta } from '../UsageTotals';
import type { AttemptMoney } from '../AgentEvents';

/**
 * Ends an LLM attempt's hold by the charge rule (`chargeAttempt`): releases the hold, then
 * charges the meter what the attempt costs — its price, or its whole hold — with the usage
 * its response reported (`usage`, none for a failed attempt). Returns the charge.
 */
export function endAttempt(meter: UsageMeter, held: Reservation, end: AttemptEnd, usage?: Usage): AttemptCharge {
  // Charged at its worst case whenever one was computed, held or not (a plain cap, the ledger):
  // a response past its bound with no usage, or a stream cut at it, was billed, never $0. Only
  // an attempt whose worst case nobody computed stays unknown.
  const charge = chargeAttempt(end, held.worstUsd, meter.billing);
  meter.release(held.held, held.externalHold);
  const delta = chargeDelta(charge, usage);
  // A failed attempt charged nothing adds nothing: no empty charge for external budgets to carry.
  if (Object.keys(delta).length > 0) meter.charge(delta);
  return charge;
}

/** What an attempt of unknown cost adds when no response reported usage: one call whose money is in no figure. */
const UNPRICED_CALL: UsageDelta = Object.freeze({ unpricedCalls: 1 });

/**
 * What `charge` adds to the totals: the response's usage, its dollars (the uncertain part apart),
 * and the dollars released. A failed attempt with nothing held adds nothing.
 */
export function chargeDelta(charge: AttemptCharge, usage: Usage | undefined): UsageDelta {
  switch (charge.kind) {
    case 'priced':
      return responseUsage(usage, charge.costUsd);
    case 'hold':
      return { ...responseUsage(usage, charge.costUsd), uncertainUsd: charge.costUsd };
    case 'release':
      return charge.releasedUsd === undefined ? {} : { releasedUsd: charge.releasedUsd };
    case 'unknown':
      return usage === undefined ? UNPRICED_CALL : { ...responseUsage(usage, undefined), unpricedCalls: 1 };
  }
}

/** `charge` as the `llmAttempt` event says it: which of the three figures, how much, and why. */
export function moneyOf(charge: AttemptCharge): AttemptMoney {
  switch (charge.kind) {
    case 'priced':
      return { figure: 'billed', usd: charge.costUsd };
    case 'hold':
      return { figure: 'uncertain', usd: charge.costUsd, why: charge.reason };
    case 'release':
      return charge.releasedUsd === undefined
        ? { figure: 'released', why: charge.reason }
        : { figure: 'released', usd: charge.releasedUsd, why: charge.reason };
    case 'unknown':
      return { figure: 'unknown', why: charge.reason };
  }
}

/**
 * The fields of an attempt's journal (and ledger) line that say what it was charged: its cost,
 * and why when that is its hold (uncertain), when its hold was let go (released), or when its
 * cost is unknown and nothing was held (unpriced: a reader never takes the missing cost for $0).
 */
export function chargeFields(charge: AttemptCharge): {
  costUsd?: number;
  chargedAtHold?: string;
  released?: string;
  releasedUsd?: number;
  unpriced?: string;
} {
  switch (charge.kind) {
    case 'hold':
      return { costUsd: charge.costUsd, chargedAtHold: charge.reason };
    case 'priced':
      return { costUsd: charge.costUsd };
    case 'release':
      return charge.releasedUsd === undefined
        ? { released: charge.reason }
        : { released: charge.reason, releasedUsd: charge.releasedUsd };
    case 'unknown':
      return { unpriced: charge.reason };
  }
}
