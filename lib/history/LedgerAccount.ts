import type { JournalLineRead } from './HistoryEntry';
import type { RunSpend } from './RunSpend';
import type { AttemptSpend } from './spendOverAttempts';
import { IN_FLIGHT, ReasonTally } from './ReasonTally';

/** What an attempt's running totals (`data.usage`) last said, beside its ledger lines. */
export interface RecordedMoney {
  readonly costUsd: number;
  readonly uncertainUsd: number;
  readonly releasedUsd: number;
  readonly unpricedCalls: number;
}

/**
 * The money an attempt's ledger lines tell: a `reserve` line opens a hold, the `llm` line of the
 * same turn, operation and attempt closes it with what it cost. Lines served from an earlier
 * attempt's journal (`fromJournal`) are kept apart: no request was made for them. Pure.
 * @internal
 */
export class LedgerAccount {
  /** USD the `llm` lines recorded. */
  #cost = 0;
  /** Of those, USD charged at a hold (the line says `chargedAtHold`). */
  #uncertain = 0;
  /** USD of holds the `llm` lines let go (`releasedUsd`). */
  #released = 0;
  /** Calls charged at their hold, by why. */
  readonly #uncertainWhy = new ReasonTally();
  /** Calls of unknown cost that nothing held (the line says `unpriced`), by why. */
  readonly #unpricedWhy = new ReasonTally();
  #unpricedLines = 0;
  /** Of the USD, what lines served from an earlier attempt's journal recorded: no request was made. */
  #servedCost = 0;
  /** Of the served USD, what was charged at a hold. */
  #servedUncertain = 0;
  /** Of the released USD, what served lines let go. */
  #servedReleased = 0;
  /** Of `#unpricedLines`, those served (a mirror's served lines say `unpriced`). */
  #servedUnpriced = 0;
  /** Why the money of the last call this attempt made itself is uncertain; undefined when it was billed or none was made. */
  #lastCallWhy: string | undefined;
  /** Reservations awaiting their `llm` line, by turn, operation and attempt: their amount (undefined: unknown). */
  readonly #reserved = new Map<string, number | undefined>();
  /** Whether any `reserve` line was read: without one, the running totals alone tell the money. */
  #seen = false;

  /** Takes a journal line; lines that are not the ledger's are passed over. */
  take(line: JournalLineRead): void {
    if (line.type !== 'reserve' && line.type !== 'llm') return;
    const key = `${line.turn}:${String(line.operation)}:${String(line.attempt)}`;
    if (line.type === 'reserve') {
      this.#seen = true;
      const max = line.maxCostUsd;
      this.#reserved.set(key, typeof max === 'number' && Number.isFinite(max) && max >= 0 ? max : undefined);
      return;
    }
    this.#reserved.delete(key);
    const served = line.fromJournal === true;
    // A served line is no call of this attempt's: the last one it made is before it, or none.
    if (!served) this.#lastCallWhy = undefined;
    const cost = line.costUsd;
    if (typeof cost === 'number' && Number.isFinite(cost) && cost >= 0) {
      this.#cost += cost;
      if (served) this.#servedCost += cost;
      const why = line.chargedAtHold;
      if (typeof why === 'string') {
        const reason = why.replace(/^charged at its hold: /, '');
        this.#uncertain += cost;
        if (served) this.#servedUncertain += cost;
        this.#uncertainWhy.add(reason, served);
        if (!served) this.#lastCallWhy = reason;
      }
    }
    const released = line.releasedUsd;
    if (typeof released === 'number' && Number.isFinite(released) && released >= 0) {
      this.#released += released;
      if (served) this.#servedReleased += released;
    }
    const unpriced = line.unpriced;
    if (typeof unpriced === 'string') {
      this.#unpricedLines++;
      if (served) this.#servedUnpriced++;
      this.#unpricedWhy.add(unpriced, served);
    }
  }

  /** What the run spent by the ledger's rule (`RunSpend`): each figure at least what the totals said. */
  spend(recorded: RecordedMoney): RunSpend {
    const { open, unpriced, held } = this.#holds();
    const ledger = this.#seen;
    return {
      costUsd: ledger ? Math.max(recorded.costUsd, round(this.#cost + held)) : recorded.costUsd,
      uncertainUsd: ledger ? Math.max(recorded.uncertainUsd, round(this.#uncertain + held)) : recorded.uncertainUsd,
      releasedUsd: ledger ? Math.max(recorded.releasedUsd, this.#released) : recorded.releasedUsd,
      // Open reservations with an amount: the others are of unknown cost, said apart (`unpriced`).
      uncertain: this.#uncertainWhy.reasons(false, open - unpriced, IN_FLIGHT.held),
      openReservations: open,
      unpricedReservations: unpriced,
      // A reservation with no amount and no response after it may have been billed at a cost nobody knows.
      unpricedCalls: Math.max(recorded.unpricedCalls, this.#unpricedLines) + unpriced,
      unpriced: this.#unpricedWhy.reasons(false, unpriced, IN_FLIGHT.unpriced),
      ledger,
    };
  }

  /** What this attempt spent itself, the parts apart, for adding up a resumed run's attempts. */
  attemptSpend(recorded: RecordedMoney): AttemptSpend {
    const { open, unpriced, held } = this.#holds();
    const priced = open - unpriced;
    return {
      recordedUsd: recorded.costUsd,
      liveUsd: round(this.#cost - this.#servedCost),
      heldUsd: round(held),
      recordedUncertainUsd: recorded.uncertainUsd,
      liveUncertainUsd: round(this.#uncertain - this.#servedUncertain),
      recordedReleasedUsd: recorded.releasedUsd,
      liveReleasedUsd: round(this.#released - this.#servedReleased),
      recordedUnpricedCalls: recorded.unpricedCalls,
      liveUnpricedCalls: this.#unpricedLines - this.#servedUnpriced,
      openUnpricedCalls: unpriced,
      uncertainWhy: this.#uncertainWhy.reasons(true, priced, IN_FLIGHT.held),
      unpricedWhy: this.#unpricedWhy.reasons(true, unpriced, IN_FLIGHT.unpriced),
      // Its last call in flight when the file ended: held, if it had a worst case; of unknown cost if not.
      lastCallUncertainWhy: open === 0 ? this.#lastCallWhy : priced > 0 ? IN_FLIGHT.held : undefined,
      ledger: this.#seen,
    };
  }

  /** The reservations still open: how many, how many of unknown amount, and the USD the others hold. */
  #holds(): { open: number; unpriced: number; held: number } {
    let unpriced = 0;
    let held = 0;
    for (const amount of this.#reserved.values()) {
      if (amount === undefined) unpriced++;
      else held += amount;
    }
    return { open: this.#reserved.size, unpriced, held };
  }
}

/** Dollars rounded to 1e-10, as totals are. */
function round(usd: number): number {
  return Math.round(usd * 1e10) / 1e10;
}
