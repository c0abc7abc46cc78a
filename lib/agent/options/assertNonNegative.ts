import { InvalidArgumentError } from '../../machine/InvalidArgumentError';

/** Throws, naming the option, unless `value` is a non-negative finite number. */
export function assertNonNegative(value: unknown, name: string): asserts value is number {
  if (!(typeof value === 'number' && Number.isFinite(value) && value >= 0)) {
    throw new InvalidArgumentError(name, 'a non-negative finite number', value);
  }
}
