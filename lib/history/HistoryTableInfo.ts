import type { StateSpec } from '../../states/AgentState';
import { createTable } from '../machine/createTable';
import { InvalidArgumentError } from '../machine/InvalidArgumentError';
import { tableEdges, tableStates, type TransitionTable } from '../machine/TransitionTable';

/**
 * A transition table as a history file stores it (in its meta line): the names, the edges and
 * which states are terminal or errors. Enough to re-validate and summarize a run of an
 * extended table with no code at hand; descriptions are left out to keep the line short.
 */
export interface HistoryTableInfo {
  readonly initial: string;
  readonly states: readonly string[];
  readonly edges: ReadonlyArray<readonly [string, string]>;
  readonly terminal: readonly string[];
  readonly error: readonly string[];
}

/** The stored form of `table`, states and edges in definition order. */
export function toHistoryTableInfo(table: TransitionTable<string>): HistoryTableInfo {
  const states = tableStates(table);
  return {
    initial: table.initial,
    states,
    edges: tableEdges(table),
    terminal: states.filter((s) => table.states[s]?.isTerminal === true),
    error: states.filter((s) => table.states[s]?.isError === true),
  };
}

/**
 * Rebuilds a checked table from its stored form. Throws `InvalidTableError` (every problem at
 * once) when the stored table is not sound: an edge to an unknown state, an unreachable state;
 * `InvalidArgumentError` when `info` does not have the stored form's shape.
 */
export function tableFromHistoryInfo(info: HistoryTableInfo): TransitionTable<string> {
  assertTableInfo(info);
  const next = new Map<string, string[]>(info.states.map((s) => [s, []]));
  const strays: StateSpec<string>[] = [];
  for (const [from, to] of info.edges) {
    const list = next.get(from);
    if (list !== undefined) list.push(to);
    // An edge from a state the list lacks becomes a state of its own, so the table check
    // reports it by name (unreachable) instead of the edge vanishing silently.
    else strays.push({ name: from, description: '', next: [to] });
  }
  const terminal = new Set(info.terminal);
  const error = new Set(info.error);
  const specs: StateSpec<string>[] = info.states.map((name) => ({
    name,
    description: '',
    next: next.get(name) ?? [],
    isTerminal: terminal.has(name),
    isError: error.has(name),
  }));
  return createTable([...specs, ...strays], info.initial);
}

function assertTableInfo(info: unknown): asserts info is HistoryTableInfo {
  if (typeof info !== 'object' || info === null || Array.isArray(info))
    throw new InvalidArgumentError('info', 'a stored table { initial, states, edges, terminal, error }', info);
  const { initial, states, edges, terminal, error } = info as Record<string, unknown>;
  if (typeof initial !== 'string') throw new InvalidArgumentError('info.initial', 'a state name', initial);
  for (const [key, list] of [
    ['states', states],
    ['terminal', terminal],
    ['error', error],
  ] as const) {
    if (!Array.isArray(list)) throw new InvalidArgumentError(`info.${key}`, 'an array of state names', list);
    list.forEach((name: unknown, i) => {
      if (typeof name !== 'string') throw new InvalidArgumentError(`info.${key}[${i}]`, 'a state name', name);
    });
  }
  if (!Array.isArray(edges)) throw new InvalidArgumentError('info.edges', 'an array of [from, to] pairs', edges);
  edges.forEach((edge: unknown, i) => {
    if (!(Array.isArray(edge) && edge.length === 2 && edge.every((s) => typeof s === 'string')))
      throw new InvalidArgumentError(`info.edges[${i}]`, 'a [from, to] pair of state names', edge);
  });
}
