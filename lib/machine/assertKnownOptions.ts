import { nearestName } from '../internal/nearestName';
import { InvalidArgumentError } from './InvalidArgumentError';
import { UnknownOptionError } from './UnknownOptionError';

/** Every key of an options type, each `true`: the list of names an entry point takes. */
export type OptionKeys<T> = { readonly [K in keyof Required<T>]: true };

/**
 * Refuses an options object with a key outside `known`, naming the nearest known one. Every
 * public entry point that takes options calls it first, so that no option is ever dropped
 * unseen. `known` holds the option names as keys; its type is checked against the type of
 * `options` (no name missing, none extra), so the list cannot drift from the type.
 *
 * `refused` names options that exist elsewhere (on the adapter, say) but that this entry point
 * cannot honour, each with why: one of them given (and not undefined) is refused with that reason.
 */
export function assertKnownOptions<T extends object, K extends OptionKeys<T>>(
  options: T,
  known: K & { readonly [X in Exclude<keyof K, keyof T>]: never },
  where: string,
  refused?: Readonly<Record<string, string | undefined>>,
): void {
  for (const key in options) {
    if (!Object.prototype.hasOwnProperty.call(options, key)) continue;
    if (Object.prototype.hasOwnProperty.call(known, key)) continue;
    const value = (options as Record<string, unknown>)[key];
    const why = refused?.[key];
    if (why !== undefined) {
      if (value === undefined) continue;
      throw new InvalidArgumentError(key, `left out of ${where}: ${why}`, value);
    }
    throw new UnknownOptionError(key, where, nearestName(key, Object.keys(known)), value);
  }
}
