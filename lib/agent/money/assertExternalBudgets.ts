import type { ExternalBudget } from './ExternalBudget';
import { InvalidArgumentError } from '../../machine/InvalidArgumentError';

/** Throws, naming the entry, unless `externalBudgets` is an array of objects with `reserve` and `charge` methods. */
export function assertExternalBudgets(externalBudgets: unknown): asserts externalBudgets is readonly ExternalBudget[] {
  if (!Array.isArray(externalBudgets))
    throw new InvalidArgumentError('externalBudgets', 'an array of { reserve(kind), charge(delta) }', externalBudgets);
  for (const [i, b] of externalBudgets.entries()) {
    if (
      typeof b !== 'object' ||
      b === null ||
      typeof (b as ExternalBudget).reserve !== 'function' ||
      typeof (b as ExternalBudget).charge !== 'function'
    ) {
      throw new InvalidArgumentError(
        `externalBudgets[${i}]`,
        'an object with reserve(kind) and charge(delta) methods',
        b,
      );
    }
  }
}
