import type { StateName } from '../states/StateName';
import { assertValidTable } from './assertValidTable';
import { IllegalTransitionError } from './IllegalTransitionError';
import { tableStates, type TransitionTable } from './TransitionTable';
import { DEFAULT_TABLE } from './transitions';
import { UnknownStateError } from './UnknownStateError';

/**
 * Answers "may the agent move from A to B?" for one table. The table is checked once and
 * turned into sets, so a check is one Map and one Set lookup.
 */
export class TransitionValidator<S extends string = StateName> {
  readonly table: TransitionTable<S>;
  readonly #edges: Map<string, ReadonlySet<string>>;
  readonly #names: readonly S[];

  constructor(table: TransitionTable<S> = DEFAULT_TABLE as unknown as TransitionTable<S>) {
    this.table = assertValidTable(table);
    this.#names = Object.freeze(tableStates(table));
    this.#edges = new Map(this.#names.map((name) => [name, new Set<string>(table.states[name].next)]));
  }

  /** Every state name of the table. */
  get states(): readonly S[] {
    return this.#names;
  }

  /** Whether `name` is a state of this table. */
  isKnown(name: unknown): name is S {
    return typeof name === 'string' && this.#edges.has(name);
  }

  /** Whether the table allows `from` → `to`; false for unknown names. */
  canTransition(from: string, to: string): boolean {
    const allowed = this.#edges.get(from);
    return allowed !== undefined && allowed.has(to);
  }

  /** The states `state` may move to. Throws `UnknownStateError` for a name the table lacks. */
  allowedFrom(state: S): readonly S[] {
    this.assertKnown(state, 'allowedFrom() state');
    return this.table.states[state].next;
  }

  /**
   * Throws when the move is not allowed: `UnknownStateError` for a name the table lacks,
   * `IllegalTransitionError` (with `from`, `to`, `allowed`) for a move it forbids.
   */
  validate(from: S, to: S, description = '', at?: number): void {
    if (this.canTransition(from, to)) return;
    this.assertKnown(from, 'transition source');
    this.assertKnown(to, 'transition target');
    throw new IllegalTransitionError<S>(from, to, this.table.states[from].next, description, at);
  }

  /** Throws `UnknownStateError` naming `where` unless `name` is a state of the table. */
  assertKnown(name: unknown, where: string): asserts name is S {
    if (!this.isKnown(name)) throw new UnknownStateError(name, this.#names, where);
  }

  isTerminal(state: S): boolean {
    return this.table.states[state]?.isTerminal === true;
  }

  isError(state: S): boolean {
    return this.table.states[state]?.isError === true;
  }
}
