// A global symbol, not a WeakMap: each integration's subpath is its own bundle, and a loop
// marked there must read as marked in the main entry's bundle too.
const UNBOUNDED = Symbol.for('agent-state-machine.unboundedLoop');

/** Why a loop cannot bound its calls, as a ready-made loop says it: the setting to give, and why. */
export interface UnboundedWhy {
  /** The setting that would bound them, as the user writes it (`options.maxTokens`). */
  setting: string;
  /** What to do, in words (`` `maxTokens` on the loop ``). */
  remedy: string;
  /** Why each call's output, and so its cost, has no bound. */
  why: string;
}

/**
 * Marks a ready-made loop whose requests ask for no max output tokens, so that a strict cap
 * can refuse it before anything runs rather than at its first call.
 */
export function markUnbounded<T extends object>(loop: T, unbounded: UnboundedWhy | undefined): T {
  if (unbounded === undefined) return loop;
  Object.defineProperty(loop, UNBOUNDED, { value: Object.freeze({ ...unbounded }), enumerable: false });
  return loop;
}

/** What `markUnbounded` said of `loop`, or undefined when it was not marked. */
export function unboundedWhy(loop: unknown): UnboundedWhy | undefined {
  if (typeof loop !== 'object' || loop === null) return undefined;
  return (loop as { [UNBOUNDED]?: UnboundedWhy })[UNBOUNDED];
}
