import type { JournalOptions } from './JournalEntry';
import { InvalidArgumentError } from '../../machine/InvalidArgumentError';

/** The `journal` option checked: its options when on, undefined when off. */
export function resolveJournal(journal: unknown): JournalOptions | undefined {
  if (journal === false) return undefined;
  if (journal === true) return {};
  if (typeof journal === 'object' && journal !== null && !Array.isArray(journal)) {
    const { redact } = journal as JournalOptions;
    if (redact !== undefined && typeof redact !== 'function')
      throw new InvalidArgumentError('journal.redact', 'a function (entry) => entry', redact);
    return redact === undefined ? {} : { redact };
  }
  throw new InvalidArgumentError('journal', 'true, false or { redact? }', journal);
}
