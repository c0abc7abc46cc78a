import type { StateActivity, StateSpec } from '../../states/AgentState';
import { DEFAULT_TABLE } from '../machine/transitions';
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
  /**
   * The states' declared activities where the default table's state of the same name does not
   * already say it (so the sixteen-state table stores none): a custom state's, or a default
   * one's that the table changed. Absent when there is none.
   */
  readonly activities?: Readonly<Record<string, StateActivity>>;
}

/** The activities a state may declare (`StateActivity`), for checking stored ones. */
export const STATE_ACTIVITIES: readonly StateActivity[] = [
  'idle',
  'llm_request',
  'llm_response',
  'tool',
  'tool_run',
  'check',
  'wait',
  'compact',
];

const DEFAULT_ACTIVITY = DEFAULT_TABLE.states as Readonly<Record<string, { activity?: StateActivity } | undefined>>;

function defaultActivity(state: string): StateActivity | undefined {
  return Object.hasOwn(DEFAULT_ACTIVITY, state) ? DEFAULT_ACTIVITY[state]?.activity : undefined;
}

/** The stored form of `table`, states and edges in definition order. */
export function toHistoryTableInfo(table: TransitionTable<string>): HistoryTableInfo {
  const states = tableStates(table);
  const info = {
    initial: table.initial,
    states,
    edges: tableEdges(table),
    terminal: states.filter((s) => table.states[s]?.isTerminal === true),
    error: states.filter((s) => table.states[s]?.isError === true),
  };
  const activities: Record<string, StateActivity> = {};
  let any = false;
  for (const s of states) {
    const activity = table.states[s]?.activity;
    if (activity !== undefined && activity !== defaultActivity(s)) {
      activities[s] = activity;
      any = true;
    }
  }
  return any ? { ...info, activities } : info;
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
  const specs: StateSpec<string>[] = info.states.map((name) => {
    const activity = info.activities?.[name] ?? defaultActivity(name);
    return {
      name,
      description: '',
      next: next.get(name) ?? [],
      isTerminal: terminal.has(name),
      isError: error.has(name),
      ...(activity === undefined ? {} : { activity }),
    };
  });
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
  const { activities } = info as Record<string, unknown>;
  if (activities !== undefined) {
    if (typeof activities !== 'object' || activities === null || Array.isArray(activities))
      throw new InvalidArgumentError('info.activities', 'an object { state: activity }', activities);
    for (const [state, activity] of Object.entries(activities))
      if (!STATE_ACTIVITIES.includes(activity as StateActivity))
        throw new InvalidArgumentError(`info.activities.${state}`, `one of ${STATE_ACTIVITIES.join(', ')}`, activity);
  }
  if (!Array.isArray(edges)) throw new InvalidArgumentError('info.edges', 'an array of [from, to] pairs', edges);
  edges.forEach((edge: unknown, i) => {
    if (!(Array.isArray(edge) && edge.length === 2 && edge.every((s) => typeof s === 'string')))
      throw new InvalidArgumentError(`info.edges[${i}]`, 'a [from, to] pair of state names', edge);
  });
}
