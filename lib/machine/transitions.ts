import { STATES } from '../../states/registry';
import { State, type StateName } from '../../states/StateName';
import { createTable } from './createTable';
import type { TransitionTable } from './TransitionTable';

/** The sixteen-state table, built from the state classes: the one source of truth. */
export const DEFAULT_TABLE: TransitionTable<StateName> = createTable(Object.values(STATES), State.Ready);

/** The allowed moves of the sixteen-state flow as plain data: state → the states it may move to. */
export const TRANSITIONS = Object.freeze(
  Object.fromEntries(Object.values(STATES).map((s) => [s.name, s.next])),
) as Readonly<Record<StateName, readonly StateName[]>> satisfies Readonly<Record<StateName, readonly StateName[]>>;
