import { tableStates, type TransitionTable } from '../machine/TransitionTable';

/** The parts states play in a run's turns, read from a table's flags: no state names assumed. */
export interface TableRoles {
  /** States that end a turn (`isTerminal`). */
  readonly terminal: ReadonlySet<string>;
  /** States that end it badly (`isError`). */
  readonly error: ReadonlySet<string>;
  /** States between turns: the initial one and those a terminal state leads to (WaitingForUserInput). */
  readonly idle: ReadonlySet<string>;
}

/**
 * The roles of `table`'s states, so every reader cuts a run into turns the same way: a turn
 * opens with the first move out of an idle state and closes with a move into a terminal one.
 */
export function tableRoles(table: TransitionTable<string>): TableRoles {
  const names = tableStates(table);
  const terminal = new Set(names.filter((s) => table.states[s]?.isTerminal === true));
  const error = new Set(names.filter((s) => table.states[s]?.isError === true));
  const idle = new Set([table.initial, ...[...terminal].flatMap((s) => table.states[s]?.next ?? [])]);
  return { terminal, error, idle };
}
