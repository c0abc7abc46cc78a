import { tableStates, type TransitionTable } from './TransitionTable';

/**
 * Whether nothing in `table` can change: the table, its states and each state's spec and `next`
 * are frozen (the default table, and every table `createTable` or `extendTable` makes). What
 * is worked out from such a table once (its checked graph, its stored form, the edges it
 * carries) holds for as long as it lives; a hand-built mutable table is worked out each time.
 */
export function isDeeplyFrozen(table: TransitionTable<string>): boolean {
  if (!Object.isFrozen(table) || !Object.isFrozen(table.states)) return false;
  for (const name of tableStates(table)) {
    const spec = table.states[name];
    if (!Object.isFrozen(spec) || !Object.isFrozen(spec?.next)) return false;
  }
  return true;
}
