import type { StateName } from '../../../states/StateName';
import { InvalidArgumentError } from '../../machine/InvalidArgumentError';
import type { StateMachine } from '../../machine/StateMachine';
import type { JournalEntry, JournalOptions } from '../journal/JournalEntry';
import { journalWriter } from '../journal/journalWriter';
import type { StallWatch } from '../stall/StallWatch';
import { journalThrough } from '../stall/watchFor';

/**
 * A mirror's journal and ledger writers, on its machine's sink (refused by name when the sink
 * takes no journal lines): the journal's lines go through the stall watch, which keeps them (in
 * memory) whether or not they are written; the ledger's share the journal's writer.
 */
export function mirrorWriters(
  machine: StateMachine<StateName>,
  journal: JournalOptions | undefined,
  ledger: boolean,
  stall: StallWatch | undefined,
  sink: unknown,
): {
  journal: ((entry: JournalEntry) => void) | undefined;
  ledger: ((entry: JournalEntry) => PromiseLike<void> | undefined | void) | undefined;
} {
  if ((journal !== undefined || ledger) && !machine.journals)
    throw new InvalidArgumentError(
      'sink',
      `a sink that takes journal lines (such as a JsonlHistorySink) when \`${journal !== undefined ? 'journal' : 'ledger'}\` is on`,
      sink,
    );
  const writer =
    journal === undefined && !ledger ? undefined : journalWriter(machine as StateMachine<string>, journal ?? {});
  return { journal: journalThrough(stall, journal === undefined ? undefined : writer), ledger: writer };
}
