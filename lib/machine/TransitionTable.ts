import type { StateSpec } from '../../states/AgentState';

/**
 * A complete transition table: the state a machine starts in and every state by name, each
 * with the states it may move to and its terminal / error flags. The default one is built
 * from the sixteen state classes; `extendTable` makes a new one with custom states or edges.
 */
export interface TransitionTable<S extends string = string> {
  readonly initial: S;
  readonly states: Readonly<Record<S, StateSpec<S>>>;
}

/** The state names of a table, in the order they were defined. */
export function tableStates<S extends string>(table: TransitionTable<S>): S[] {
  return Object.keys(table.states) as S[];
}

/** Every edge of a table as `[from, to]`, in definition order. */
export function tableEdges<S extends string>(table: TransitionTable<S>): Array<[S, S]> {
  const edges: Array<[S, S]> = [];
  for (const from of tableStates(table)) for (const to of table.states[from].next) edges.push([from, to]);
  return edges;
}
