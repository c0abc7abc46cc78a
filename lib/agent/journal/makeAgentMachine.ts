import type { StateName } from '../../../states/StateName';
import { InvalidArgumentError } from '../../machine/InvalidArgumentError';
import { StateMachine, type StateMachineOptions } from '../../machine/StateMachine';
import type { JournalOptions } from './JournalEntry';
import { journalWriter } from './journalWriter';

/**
 * The adapter's machine, and the writer of its journal and ledger lines when either is on
 * (undefined when both are off). Throws, naming the option, when one is on and the sink takes
 * no journal lines.
 */
export function makeAgentMachine(
  machineOptions: StateMachineOptions<StateName>,
  journalOptions: JournalOptions | undefined,
  ledger: boolean,
): { machine: StateMachine<StateName>; writer: ReturnType<typeof journalWriter> | undefined } {
  const machine = new StateMachine<StateName>(machineOptions);
  if ((journalOptions !== undefined || ledger) && !machine.journals) {
    throw new InvalidArgumentError(
      'sink',
      `a sink that takes journal lines (an object with journal(entry), such as a JsonlHistorySink) when \`${journalOptions !== undefined ? 'journal' : 'ledger'}\` is on`,
      machineOptions.sink,
    );
  }
  const writer =
    journalOptions === undefined && !ledger
      ? undefined
      : journalWriter(machine as StateMachine<string>, journalOptions ?? {});
  return { machine, writer };
}
