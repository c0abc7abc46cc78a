import { describeValue } from '../internal/describeValue';
import { StateMachineError } from './StateMachineError';

/**
 * A caller passed a value the library cannot use: it names the argument, what was expected
 * and what came instead, e.g. ``Expected `maxHistorySize` to be a positive integer, got `0` (number)``.
 */
export class InvalidArgumentError extends StateMachineError {
  readonly code = 'invalid_argument' as const;

  constructor(
    /** The option or argument, as the caller wrote it (`maxHistorySize`, `budget.maxCostUsd`). */
    readonly argument: string,
    /** What would have been accepted, in words. */
    readonly expected: string,
    /** What was received. */
    readonly value: unknown,
  ) {
    super(`Expected \`${argument}\` to be ${expected}, got ${describeValue(value)}`);
  }
}
