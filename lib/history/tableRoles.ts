import type { StateActivity } from '../../states/AgentState';
import { tableStates, type TransitionTable } from '../machine/TransitionTable';
import { isDeeplyFrozen } from '../machine/isDeeplyFrozen';
import { DEFAULT_TABLE } from '../machine/transitions';

/** The parts states play in a run's turns, read from a table's flags: no state names assumed. */
export interface TableRoles {
  /** States that end a turn (`isTerminal`). */
  readonly terminal: ReadonlySet<string>;
  /** States that end it badly (`isError`). */
  readonly error: ReadonlySet<string>;
  /** States between turns: the initial one and those a terminal state leads to (WaitingForUserInput). */
  readonly idle: ReadonlySet<string>;
  /** What each state with a declared `activity` spends its time on. */
  readonly activity: ReadonlyMap<string, StateActivity>;
  /** States an LLM call is made from (`llm_request`): a move out of one ends the call. */
  readonly llmRequest: ReadonlySet<string>;
  /** Of those, the ones entered from an idle state: their call sends the user's message. */
  readonly userRequest: ReadonlySet<string>;
  /** States a successful LLM call leads to (`llm_response`). */
  readonly llmResponse: ReadonlySet<string>;
  /** States tool calls run in (`tool_run`): the move out of one carries their results. */
  readonly toolRun: ReadonlySet<string>;
  /** States a turn waits in for a person (`wait`): a run that stops there is paused, not cut off. */
  readonly wait: ReadonlySet<string>;
}

// One set of roles per table frozen all the way down (the default table, and every table
// createTable or extendTable makes), shared: a batch reads the roles of each run's table as the
// run's file is written, and nothing can change such a table after its roles were read.
const shared = new WeakMap<object, TableRoles>();

/** `tableRoles(table)`, read once per deeply frozen table and shared; a mutable table is read anew. */
export function sharedTableRoles(table: TransitionTable<string>): TableRoles {
  const known = shared.get(table);
  if (known !== undefined) return known;
  const roles = tableRoles(table);
  if (isDeeplyFrozen(table)) shared.set(table, roles);
  return roles;
}

/**
 * The roles of `table`'s states, so every reader cuts a run into turns the same way: a turn
 * opens with the first move out of an idle state and closes with a move into a terminal one.
 * Activities come from the states' `activity`; a state that declares none, in a table read
 * from a file (which stores no activities), takes the default table's state of that name's.
 */
export function tableRoles(table: TransitionTable<string>): TableRoles {
  const names = tableStates(table);
  const terminal = new Set(names.filter((s) => table.states[s]?.isTerminal === true));
  const error = new Set(names.filter((s) => table.states[s]?.isError === true));
  const idle = new Set([table.initial, ...[...terminal].flatMap((s) => table.states[s]?.next ?? [])]);
  const fallback = DEFAULT_TABLE.states as Readonly<Record<string, { activity?: StateActivity } | undefined>>;
  const activity = new Map<string, StateActivity>();
  for (const s of names) {
    const declared = table.states[s]?.activity ?? (Object.hasOwn(fallback, s) ? fallback[s]?.activity : undefined);
    if (declared !== undefined) activity.set(s, declared);
  }
  const having = (a: StateActivity): Set<string> => new Set(names.filter((s) => activity.get(s) === a));
  const llmRequest = having('llm_request');
  const userRequest = new Set(
    [...llmRequest].filter((s) => [...idle].some((i) => (table.states[i]?.next ?? []).includes(s))),
  );
  return {
    terminal,
    error,
    idle,
    activity,
    llmRequest,
    userRequest,
    llmResponse: having('llm_response'),
    toolRun: having('tool_run'),
    wait: having('wait'),
  };
}
