import { describeValue } from '../internal/describeValue';
import { StateMachineError } from './StateMachineError';

/** A state name that the machine's table does not have (a typo, or a custom state never added). */
export class UnknownStateError extends StateMachineError {
  readonly code = 'unknown_state' as const;

  constructor(
    /** The name received. */
    readonly value: unknown,
    /** The names the table knows. */
    readonly known: readonly string[],
    /** Where the name was used, e.g. `transition() target`. */
    readonly where: string,
  ) {
    super(`Unknown state ${describeValue(value)} as ${where}; known states: ${known.join(', ')}`);
  }
}
