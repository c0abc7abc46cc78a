import { extendTable } from '../../machine/extendTable';
import { InvalidArgumentError } from '../../machine/InvalidArgumentError';
import type { TransitionTable } from '../../machine/TransitionTable';
import { DEFAULT_TABLE } from '../../machine/transitions';
import { STALL_EXTENSION } from '../extensionStates';
import type { StallOptions } from '../stall/StallOptions';
import { StallWatch } from '../stall/StallWatch';
import { resolveStall } from '../stall/StallOptions';

/** The mirror's table when it watches for stalls: the sixteen states and STALL_EXTENSION's. */
let stallTable: TransitionTable<string> | undefined;

/**
 * The stall watch of a `StepMirror` (its `stall` option) and the table it needs, or undefined
 * when off. A framework's loop takes no message from the mirror, so it cannot be nudged: the
 * policy is `stop`, and a `nudge` is refused by name rather than dropped.
 */
export function mirrorStall(stall: unknown): { watch: StallWatch; table: TransitionTable<string> } | undefined {
  if (stall === undefined || stall === false) return undefined;
  const given = typeof stall === 'object' && stall !== null ? (stall as StallOptions).policy : undefined;
  const policies = typeof given === 'string' ? [given] : Array.isArray(given) ? (given as unknown[]) : [];
  if (policies.includes('nudge'))
    throw new InvalidArgumentError(
      'stall.policy',
      "'stop' (a framework's loop takes no message from the mirror, so it cannot be nudged)",
      given,
    );
  // Anything but true or an object is left to resolveStall, which names what it expected.
  const options =
    stall === true
      ? { policy: 'stop' }
      : typeof stall === 'object' && stall !== null && !Array.isArray(stall)
        ? { policy: 'stop', ...stall }
        : stall;
  const resolved = resolveStall(options);
  stallTable ??= extendTable(DEFAULT_TABLE, STALL_EXTENSION) as TransitionTable<string>;
  return { watch: new StallWatch(resolved!), table: stallTable };
}
