import { isDeeplyFrozen } from './isDeeplyFrozen';
import type { StateName } from '../../states/StateName';
import { assertValidTable } from './assertValidTable';
import { IllegalTransitionError } from './IllegalTransitionError';
import { tableStates, type TransitionTable } from './TransitionTable';
import { DEFAULT_TABLE } from './transitions';
import { UnknownStateError } from './UnknownStateError';

/**
 * A state of the table with the states it may move to, each as a node of its own, so that
 * checking a move from a node and finding the node to be in next is a single Map lookup.
 * Internal (for `StateMachine`, which keeps the node it is in); not exported by the package.
 */
export interface StateNode<S extends string = string> {
  readonly name: S;
  readonly next: ReadonlyMap<string, StateNode<S>>;
}

/** The node of `name` in `validator`'s table, or undefined for a name it lacks. Internal. */
export let stateNode: <S extends string>(validator: TransitionValidator<S>, name: string) => StateNode<S> | undefined;

// One checked graph per table, shared by every machine on it: a new machine costs a lookup,
// not a table check and sixteen Maps. Only tables frozen all the way down are shared (the
// default table, and every table `createTable` or `extendTable` makes), since nothing can
// change them after the check; a hand-built mutable table is checked anew for each machine.
const shared = new WeakMap<object, TransitionValidator<string>>();

/**
 * The validator of `table` (default: the sixteen-state table), made once per frozen table and
 * shared. Internal (for `StateMachine`); not exported by the package.
 */
export function sharedValidator<S extends string>(table?: TransitionTable<S>): TransitionValidator<S> {
  const key: object = table ?? DEFAULT_TABLE;
  const known = shared.get(key);
  if (known !== undefined) return known as unknown as TransitionValidator<S>;
  const validator = new TransitionValidator<S>(table);
  if (isDeeplyFrozen(validator.table)) shared.set(key, validator as unknown as TransitionValidator<string>);
  return validator;
}

/**
 * Answers "may the agent move from A to B?" for one table. The table is checked once and
 * turned into a graph of nodes, so a check is two Map lookups, and a machine that keeps
 * the node it is in needs one.
 */
export class TransitionValidator<S extends string = StateName> {
  static {
    stateNode = (validator, name) => validator.#nodes.get(name);
  }

  readonly table: TransitionTable<S>;
  readonly #nodes: Map<string, StateNode<S>>;
  readonly #names: readonly S[];

  constructor(table: TransitionTable<S> = DEFAULT_TABLE as unknown as TransitionTable<S>) {
    this.table = assertValidTable(table);
    this.#names = Object.freeze(tableStates(table));
    const edges = new Map(this.#names.map((name) => [name, new Map<string, StateNode<S>>()]));
    this.#nodes = new Map(this.#names.map((name) => [name, { name, next: edges.get(name)! }]));
    // A valid table names only its own states in `next`, so every target has a node.
    for (const name of this.#names)
      for (const to of table.states[name].next) edges.get(name)!.set(to, this.#nodes.get(to)!);
  }

  /** Every state name of the table. */
  get states(): readonly S[] {
    return this.#names;
  }

  /** Whether `name` is a state of this table. */
  isKnown(name: unknown): name is S {
    return typeof name === 'string' && this.#nodes.has(name);
  }

  /** Whether the table allows `from` → `to`; false for unknown names. */
  canTransition(from: string, to: string): boolean {
    const node = this.#nodes.get(from);
    return node !== undefined && node.next.has(to);
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
