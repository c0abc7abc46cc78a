import type { StateSpec } from '../../states/AgentState';
import { checkTable, type TableIssue } from './checkTable';
import { createTable } from './createTable';
import { describeValue } from '../internal/describeValue';
import { InvalidArgumentError } from './InvalidArgumentError';
import { InvalidTableError } from './InvalidTableError';
import type { TransitionTable } from './TransitionTable';

/** What to add to a table: new states (e.g. Compacting) and new edges between any states. */
export interface TableExtension<N extends string> {
  readonly states?: ReadonlyArray<StateSpec<string> & { readonly name: N }>;
  readonly edges?: ReadonlyArray<readonly [string, string]>;
}

/**
 * A new table: `base` plus the given states and edges, checked as a whole (unknown names,
 * unreachable states, dead ends) with every problem reported at once. `base` is unchanged.
 *
 * ```ts
 * const table = extendTable(DEFAULT_TABLE, {
 *   states: [{ name: 'Compacting', description: 'Agent compacts the conversation', next: ['SendingToLLM', 'Error'] }],
 *   edges: [['ProcessingLLMResponse', 'Compacting']],
 * });
 * ```
 */
export function extendTable<S extends string, N extends string = never>(
  base: TransitionTable<S>,
  extension: TableExtension<N>,
): TransitionTable<S | N> {
  type All = S | N;
  if (typeof base !== 'object' || base === null || typeof base.states !== 'object' || base.states === null) {
    throw new InvalidArgumentError('base', 'a transition table { initial, states }', base);
  }
  if (typeof extension !== 'object' || extension === null)
    throw new InvalidArgumentError('extension', 'an object { states?, edges? }', extension);
  if (extension.states !== undefined && !Array.isArray(extension.states))
    throw new InvalidArgumentError('extension.states', 'an array of state specs', extension.states);
  if (extension.edges !== undefined && !Array.isArray(extension.edges))
    throw new InvalidArgumentError('extension.edges', 'an array of [from, to] pairs', extension.edges);
  (extension.states ?? []).forEach((spec, i) => {
    if (typeof spec !== 'object' || spec === null || typeof spec.name !== 'string') {
      throw new InvalidArgumentError(
        `extension.states[${i}]`,
        'a state spec { name: string, description, next }',
        spec,
      );
    }
  });
  (extension.edges ?? []).forEach((edge, i) => {
    if (!Array.isArray(edge) || edge.length !== 2)
      throw new InvalidArgumentError(`extension.edges[${i}]`, 'a [from, to] pair', edge);
  });
  const specs = new Map<string, StateSpec<All>>();
  for (const spec of Object.values(base.states) as StateSpec<S>[]) specs.set(spec.name, spec);
  // Re-declaring a base state replaces it (Map.set keeps the base's order): that is how a
  // caller changes a state's description or next states.
  for (const spec of extension.states ?? []) specs.set(spec.name, spec as StateSpec<All>);
  const added = new Map<string, string[]>();
  for (const [from, to] of extension.edges ?? []) {
    const list = added.get(from) ?? [];
    list.push(to);
    added.set(from, list);
  }
  const merged: StateSpec<All>[] = [];
  for (const spec of specs.values()) {
    const more = added.get(spec.name);
    added.delete(spec.name);
    merged.push(
      more === undefined
        ? spec
        : Object.freeze({
            name: spec.name,
            description: spec.description,
            next: Object.freeze([...spec.next, ...(more as All[])]),
            isTerminal: spec.isTerminal === true,
            isError: spec.isError === true,
            ...(spec.activity === undefined ? {} : { activity: spec.activity }),
          }),
    );
  }
  // Edges from states that exist nowhere are reported together with whatever else is wrong.
  const unknownSources: TableIssue[] = [...added].map(([from, tos]) => ({
    code: 'unknown_source' as const,
    from,
    to: tos,
    message: `Edge from unknown state ${describeValue(from)} (to ${tos.join(', ')})`,
  }));
  if (unknownSources.length > 0) {
    const rest = checkTable({ initial: base.initial, states: Object.fromEntries(merged.map((m) => [m.name, m])) });
    throw new InvalidTableError([...unknownSources, ...rest.issues]);
  }
  return createTable(merged, base.initial);
}
