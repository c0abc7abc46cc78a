import type { ReserveJournalEntry } from '../journal/JournalEntry';
import type { Reservation } from './reserveLLMCall';

/** The ledger's write-ahead line for one attempt: its worst case, else the stated default, else why it is unknown. */
export function reserveLine(
  turn: number,
  operation: ReserveJournalEntry['operation'],
  attempt: number,
  at: number,
  held: Reservation,
  defaultUsd: number | undefined,
  noBound = 'the loop has no llmCallBound',
): ReserveJournalEntry {
  const line: ReserveJournalEntry = { type: 'reserve', turn, operation, attempt, at };
  if (held.worstUsd !== undefined) line.maxCostUsd = held.worstUsd;
  else if (defaultUsd !== undefined) {
    line.maxCostUsd = defaultUsd;
    line.defaulted = true;
  }
  if (held.bound !== undefined) line.bound = held.bound;
  if (held.worstUsd === undefined) line.unknown = held.unknown ?? noBound;
  return line;
}
