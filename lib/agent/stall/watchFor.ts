import { InvalidArgumentError } from '../../machine/InvalidArgumentError';
import type { JournalEntry } from '../journal/JournalEntry';
import { resolveStall } from './StallOptions';
import { StallWatch } from './StallWatch';

/**
 * The adapter's stall watch for its `stall` option, or undefined when it is off. The watch reads
 * the journal the turns write; with `ledger` on and `journal` off they write only ledger lines,
 * which hold no responses, so that combination is refused rather than left unwatched.
 */
export function watchFor(stall: unknown, journal: unknown, ledger: unknown): StallWatch | undefined {
  const resolved = resolveStall(stall);
  if (resolved === undefined) return undefined;
  if (ledger === true && (journal === false || journal === undefined))
    throw new InvalidArgumentError(
      'journal',
      'on (true or { redact }) when both `stall` and `ledger` are: stall detectors read the responses, which a ledger-only journal leaves out',
      journal,
    );
  return new StallWatch(resolved);
}

/** The journal function of the turns: `write` (the journal's, or undefined when it is off), kept by the watch first when there is one. */
export function journalThrough(
  watch: StallWatch | undefined,
  write: ((entry: JournalEntry) => void) | undefined,
): ((entry: JournalEntry) => void) | undefined {
  return watch === undefined ? write : watch.tee(write);
}
