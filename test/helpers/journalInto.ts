import type { JournalLine } from 'agent-state-machine';

/** A sink option that keeps the journal lines in `lines` (and drops the moves): for a mirror's or an observed run's options. */
export function journalInto(lines: JournalLine[]): { sink: { write(): void; journal(line: JournalLine): void } } {
  return { sink: { write: () => undefined, journal: (line) => void lines.push(line) } };
}
