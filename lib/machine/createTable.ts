import type { StateSpec } from '../../states/AgentState';
import { assertValidTable } from './assertValidTable';
import { InvalidArgumentError } from './InvalidArgumentError';
import { InvalidTableError } from './InvalidTableError';
import type { TransitionTable } from './TransitionTable';

/**
 * Builds a checked, frozen table from state specs (state class instances or plain objects);
 * the specs and their `next` arrays are frozen too.
 * Throws `InvalidTableError` listing every problem: duplicates, unknown names, unreachable
 * states, dead ends.
 */
export function createTable<S extends string>(specs: Iterable<StateSpec<S>>, initial: S): TransitionTable<S> {
  if (
    typeof specs !== 'object' ||
    specs === null ||
    typeof (specs as Iterable<unknown>)[Symbol.iterator] !== 'function'
  ) {
    throw new InvalidArgumentError('specs', 'an iterable of state specs { name, description, next }', specs);
  }
  const states = {} as Record<S, StateSpec<S>>;
  const duplicates: string[] = [];
  let index = 0;
  for (const spec of specs) {
    if (typeof spec !== 'object' || spec === null || typeof spec.name !== 'string') {
      throw new InvalidArgumentError(`specs[${index}]`, 'a state spec { name: string, description, next }', spec);
    }
    index += 1;
    // Assigning `__proto__` would replace the table's prototype instead of adding a state.
    if (spec.name === '__proto__') {
      throw new InvalidTableError([
        {
          code: 'reserved_name',
          state: spec.name,
          message: 'State name `__proto__` is reserved: it is not a property name a table can hold',
        },
      ]);
    }
    if (Object.prototype.hasOwnProperty.call(states, spec.name)) duplicates.push(spec.name);
    // Frozen with the table, so that nothing can change a table once it has been checked
    // (machines share one checked graph per table: see TransitionValidator).
    Object.freeze(spec.next);
    states[spec.name] = Object.freeze(spec);
  }
  if (duplicates.length > 0) {
    throw new InvalidTableError(
      duplicates.map((state) => ({
        code: 'duplicate_state' as const,
        state,
        message: `State ${state} is defined more than once`,
      })),
    );
  }
  return assertValidTable(Object.freeze({ initial, states: Object.freeze(states) }));
}
