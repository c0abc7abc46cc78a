import type { JournalEntry, ReserveJournalEntry } from '../journal/JournalEntry';
import type { UsageMeter } from '../money/UsageMeter';
import { ONE_LLM_CALL } from '../UsageTotals';
import { commitFailure } from './commitFailure';
import type { Reservation } from './reserveLLMCall';
import { reserveLine } from './reserveLine';

/** Where an attempt's reserve line goes: the ledger's writer (a store's commit, or nothing to await). */
export type LedgerWriter = (entry: JournalEntry) => PromiseLike<void> | undefined | void;

/**
 * An attempt that passed its gate, for both drivers: counted (before any await, as the checks
 * need: a call whose line is then not kept stays counted), then its write-ahead line written to
 * the ledger (`reserveLine`, at `clock()`, read only then: its worst case, else the stated default `defaultUsd`, else why it
 * is unknown). Undefined when nothing waits; else a promise of what the store's commit failed
 * with (the request must not leave: the caller lets go of `held`), undefined once kept.
 */
export function keepReserveLine(
  meter: UsageMeter,
  ledger: LedgerWriter | undefined,
  line: { turn: number; operation: ReserveJournalEntry['operation']; attempt: number },
  clock: () => number,
  held: Reservation,
  defaultUsd: number | undefined,
  noBound: string,
): Promise<unknown> | undefined {
  meter.charge(ONE_LLM_CALL, false);
  if (ledger === undefined) return undefined;
  const commit = ledger(reserveLine(line.turn, line.operation, line.attempt, clock(), held, defaultUsd, noBound));
  return commit === undefined || commit === null ? undefined : commitFailure(commit);
}
