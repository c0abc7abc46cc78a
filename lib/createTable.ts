import type { StateSpec } from '../states/AgentState';
import { assertValidTable } from './assertValidTable';
import { InvalidTableError } from './InvalidTableError';
import type { TransitionTable } from './TransitionTable';

/**
 * Builds a checked, frozen table from state specs (state class instances or plain objects).
 * Throws `InvalidTableError` listing every problem: duplicates, unknown names, unreachable
 * states, dead ends.
 */
export function createTable<S extends string>(specs: Iterable<StateSpec<S>>, initial: S): TransitionTable<S> {
  const states = {} as Record<S, StateSpec<S>>;
  const duplicates: string[] = [];
  for (const spec of specs) {
    if (Object.prototype.hasOwnProperty.call(states, spec.name)) duplicates.push(spec.name);
    states[spec.name] = spec;
  }
  if (duplicates.length > 0) {
    throw new InvalidTableError(duplicates.map((state) => ({ code: 'duplicate_state' as const, state, message: `State ${state} is defined more than once` })));
  }
  return assertValidTable(Object.freeze({ initial, states: Object.freeze(states) }));
}
