import { checkTable } from './checkTable';
import { InvalidTableError } from './InvalidTableError';
import type { TransitionTable } from './TransitionTable';

/** The throwing twin of `checkTable`: returns the table when it is sound, else throws with every problem. */
export function assertValidTable<S extends string>(table: TransitionTable<S>): TransitionTable<S> {
  const result = checkTable(table);
  if (!result.ok) throw new InvalidTableError(result.issues);
  return table;
}
