import { assertHistoryItem, assertIterable, assertOptions, assertTableShape } from './assertHistoryInput';
import { isHistoryEntry, type HistoryItem, type HistoryMeta } from './HistoryEntry';
import { InvalidArgumentError } from '../machine/InvalidArgumentError';
import type { TransitionRecord } from '../machine/TransitionRecord';
import { tableEdges, tableStates, type TransitionTable } from '../machine/TransitionTable';
import { DEFAULT_TABLE } from '../machine/transitions';
import { escapeControl } from '../internal/escapeControl';

/**
 * The table as a Mermaid `stateDiagram-v2`: `[*] --> Ready`, then one line per edge in
 * definition order. The diagram in docs/machine.md is this output, checked by a test, so the
 * picture can never drift from the code.
 */
export function toMermaid(table: TransitionTable<string> = DEFAULT_TABLE as TransitionTable<string>): string {
  assertTableShape(table, 'table');
  const ids = new StateIds([table.initial, ...tableStates(table)]);
  const start = `    [*] --> ${ids.of(table.initial)}`;
  const edges = tableEdges(table).map(([from, to]) => `    ${ids.of(from)} --> ${ids.of(to)}`);
  return ['stateDiagram-v2', ...ids.declarations(), start, ...edges].join('\n');
}

/** Options of `historyToMermaid`: the table to draw the run against. */
export interface HistoryDiagramOptions {
  /** Default: the table in the meta line, else the sixteen-state table. */
  table?: TransitionTable<string>;
}

/**
 * The table's diagram with the edges a run took labelled with how often (`A --> B : 3×`),
 * forced moves counted apart, moves outside the table added and marked, and a note on the
 * state the run ended in.
 */
export function historyToMermaid(items: Iterable<HistoryItem>, options: HistoryDiagramOptions = {}): string {
  assertOptions(options);
  const { records, table } = collect(items, options.table);
  const diagram = new RunDiagram(table);
  for (const r of records) diagram.addRecord(r);
  return diagram.result();
}

/**
 * `historyToMermaid` a line at a time, for files too large to hold: keeps only the edge
 * counts and the last record. The table is the one given, else the meta line's (which must
 * come first), else the sixteen-state one.
 */
export class RunDiagram {
  #table: TransitionTable<string> | undefined;
  readonly #counts = new Map<string, { from: string; to: string; total: number; forced: number }>();
  #last: TransitionRecord<string> | undefined;

  constructor(table?: TransitionTable<string>) {
    if (table !== undefined) assertTableShape(table, 'table');
    this.#table = table;
  }

  /** Takes one line read from a file (meta lines name the table) or a bare record. */
  add(item: HistoryItem): void {
    if (!isHistoryEntry(item)) this.addRecord(item);
    else if (item.kind === 'record') this.addRecord(item.record);
    else if (item.kind === 'meta') this.#table ??= item.table;
  }

  addRecord(r: TransitionRecord<string>): void {
    const key = `${r.from}\u0000${r.to}`;
    let c = this.#counts.get(key);
    if (c === undefined) this.#counts.set(key, (c = { from: r.from, to: r.to, total: 0, forced: 0 }));
    c.total++;
    if (r.forced) c.forced++;
    this.#last = r;
  }

  result(): string {
    const table = this.#table ?? (DEFAULT_TABLE as TransitionTable<string>);
    const counts = new Map(this.#counts);
    const ids = new StateIds([
      table.initial,
      ...tableStates(table),
      ...[...counts.values()].flatMap((c) => [c.from, c.to]),
    ]);
    const lines: string[] = [`    [*] --> ${ids.of(table.initial)}`];
    const label = (total: number, forced: number, inTable: boolean): string => {
      if (total === 0) return '';
      if (forced === total) return ` : ${total}× forced`;
      const extra = forced > 0 ? ` (${forced} forced)` : '';
      return ` : ${total}×${extra}${inTable ? '' : ' illegal'}`;
    };
    for (const [from, to] of tableEdges(table)) {
      const key = `${from}\u0000${to}`;
      const c = counts.get(key);
      counts.delete(key);
      lines.push(`    ${ids.of(from)} --> ${ids.of(to)}${label(c?.total ?? 0, c?.forced ?? 0, true)}`);
    }
    for (const c of counts.values())
      lines.push(`    ${ids.of(c.from)} --> ${ids.of(c.to)}${label(c.total, c.forced, false)}`);
    const last = this.#last;
    if (last !== undefined) lines.push(`    note right of ${ids.of(last.to)} : ended here (seq ${last.seq})`);
    return ['stateDiagram-v2', ...ids.declarations(), ...lines].join('\n');
  }
}

/** Options of `historyToGantt`: the table and the chart's title. */
export interface GanttOptions extends HistoryDiagramOptions {
  /** Default: `Run <runId>` from the meta line, else `Run`. */
  title?: string;
}

/**
 * A run as a Mermaid `gantt` timeline: one lane (section) per state, in table order, one bar
 * per visit from when the machine entered the state to when it left (`dateFormat x`, epoch
 * milliseconds), visits to error states marked `crit`, and a milestone where the run ended.
 * Compact display puts every visit of a state on the one row.
 */
export function historyToGantt(items: Iterable<HistoryItem>, options: GanttOptions = {}): string {
  assertOptions(options);
  if (options.title !== undefined && typeof options.title !== 'string')
    throw new InvalidArgumentError('options.title', 'a string', options.title);
  const { records, table, meta } = collect(items, options.table);
  const title = options.title ?? (meta === undefined ? 'Run' : `Run ${meta.runId}`);
  const visits = new Map<string, string[]>();
  const lane = (state: string): string[] => {
    let list = visits.get(state);
    if (list === undefined) visits.set(state, (list = []));
    return list;
  };
  for (const r of records) {
    const tags = table.states[r.from]?.isError === true ? 'crit, ' : '';
    lane(r.from).push(`    ${taskName(r.description, r.seq)} :${tags}${r.at - r.durationMs}, ${r.at}`);
  }
  const last = records.at(-1);
  if (last !== undefined) lane(last.to).push(`    ended in ${sanitize(last.to)} :milestone, ${last.at}, ${last.at}`);
  const order = [
    ...tableStates(table).filter((s) => visits.has(s)),
    ...[...visits.keys()].filter((s) => table.states[s] === undefined),
  ];
  const sections = order.flatMap((state) => [`    section ${sanitize(state)}`, ...visits.get(state)!]);
  return [
    '---',
    'displayMode: compact',
    '---',
    'gantt',
    `    title ${sanitize(title)}`,
    '    dateFormat x',
    '    axisFormat %H:%M:%S',
    ...sections,
  ].join('\n');
}

function collect(
  items: Iterable<HistoryItem>,
  given: TransitionTable<string> | undefined,
): { records: TransitionRecord<string>[]; table: TransitionTable<string>; meta: HistoryMeta | undefined } {
  if (given !== undefined) assertTableShape(given, 'options.table');
  assertIterable(items, 'items', 'an iterable of transition records or history entries');
  const records: TransitionRecord<string>[] = [];
  let table = given;
  let meta: HistoryMeta | undefined;
  let index = 0;
  for (const item of items) {
    assertHistoryItem(item, `items[${index++}]`);
    if (!isHistoryEntry(item)) records.push(item);
    else if (item.kind === 'record') records.push(item.record);
    else if (item.kind === 'meta') {
      meta = item.meta;
      table ??= item.table;
    }
  }
  return { records, table: table ?? (DEFAULT_TABLE as TransitionTable<string>), meta };
}

const PLAIN_ID = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * Mermaid ids for state names: a plain name is its own id; any other gets `state "name" as sN`.
 * The plain names of the diagram are reserved up front, so a generated `sN` never takes the id
 * of a state literally named `s1`; a plain name met later whose id is taken is declared too.
 */
class StateIds {
  readonly #ids = new Map<string, string>();
  readonly #used = new Set<string>();
  readonly #declared: string[] = [];
  #next = 1;

  constructor(names: Iterable<string>) {
    for (const name of names) {
      if (PLAIN_ID.test(name)) {
        this.#ids.set(name, name);
        this.#used.add(name);
      }
    }
  }

  of(name: string): string {
    let id = this.#ids.get(name);
    if (id !== undefined) return id;
    if (PLAIN_ID.test(name) && !this.#used.has(name)) id = name;
    else {
      do id = `s${this.#next++}`;
      while (this.#used.has(id));
      this.#declared.push(`    state "${mermaidLabel(name)}" as ${id}`);
    }
    this.#ids.set(name, id);
    this.#used.add(id);
    return id;
  }

  /** The `state "…" as sN` lines, which must come before the edges that use them. */
  declarations(): string[] {
    return this.#declared;
  }
}

/**
 * A state name as a quoted Mermaid label: control characters escaped (so no name can end the
 * line and add one of its own), quotes and `#` as Mermaid entity codes.
 */
function mermaidLabel(name: string): string {
  return escapeControl(name).replace(/#/g, '#35;').replace(/"/g, '#quot;');
}

// Gantt lines use `:` to end the task name and `#`, `;`, `%%` for other syntax; a control
// character could end the line.
// eslint-disable-next-line no-control-regex -- control characters are among what it removes
const GANTT_UNSAFE = /[:;#%\u0000-\u001f\u007f-\u009f\u2028\u2029]+/g;
function sanitize(text: string): string {
  return text.replace(GANTT_UNSAFE, ' ').replace(/\s+/g, ' ').trim();
}

function taskName(description: string, seq: number): string {
  const name = sanitize(description);
  if (name === '') return `seq ${seq}`;
  return name.length > 40 ? `${name.slice(0, 37)}...` : name;
}
