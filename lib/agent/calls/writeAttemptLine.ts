import type { AttemptEndLine, JournalEntry, LlmJournalEntry } from '../journal/JournalEntry';

/** Where attempt lines go: the journal (content and money), else the ledger alone (money). */
export interface AttemptWriters {
  journal: ((entry: JournalEntry) => void) | undefined;
  ledger: ((entry: JournalEntry) => unknown) | undefined;
}

/** An attempt's line without its end: what it was (turn, operation, attempt, times) and what it carried. */
export type AttemptHead = Omit<LlmJournalEntry, 'response' | 'costUsd' | 'error'>;

/**
 * An ended attempt's line, the adapter's and the mirror's: in the journal, what it carried then
 * its response or its error (its usage is the response's); without the journal but with the
 * ledger, only its cost and usage, no content. A failed attempt's usage (an answer the loop
 * refused) is in its journal line too.
 */
export function writeAttemptLine(writers: AttemptWriters, head: AttemptHead, outcome: AttemptEndLine): void {
  if (writers.journal !== undefined) {
    // The response carries its usage; a refused answer's usage (no response kept) stays in its line.
    if (outcome.response === undefined) return void writers.journal({ ...head, ...outcome });
    const { usage: _usage, ...full } = outcome;
    writers.journal({ ...head, ...full });
  } else if (writers.ledger !== undefined) {
    const { response: _response, ...money } = outcome;
    const { input: _input, ...line } = head;
    writers.ledger({ ...line, ledgerOnly: true, ...money } as JournalEntry);
  }
}
