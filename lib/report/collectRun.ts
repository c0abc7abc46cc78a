import { isHistoryEntry, type HistoryItem, type HistoryMeta, type RejectedMove } from '../history/HistoryEntry';
import { RunFactsCollector, type RunUsage, type UsagePoint } from '../history/runFacts';
import type { RunSpend } from '../history/RunSpend';
import { HistorySummarizer, type HistorySummary } from '../history/summarizeHistory';
import type { TransitionRecord } from '../machine/TransitionRecord';
import { tableStates, type TransitionTable } from '../machine/TransitionTable';
import { DEFAULT_TABLE } from '../machine/transitions';
import { tableRoles, type TableRoles } from '../history/tableRoles';
import type { StateActivity } from '../../states/AgentState';

/**
 * How a state is drawn: the colour family of its bars on a timeline. A state of a known
 * activity gets that activity's colour; any other (a custom state that declares none) one of
 * `OTHER_COLOURS` picked from its name, so the same state has the same colour in every report.
 */
export type StateKind = 'idle' | 'llm' | 'tool' | 'check' | 'wait' | 'end' | 'error' | 'other' | `other-${number}`;

/** How many distinct colours states with no activity share (`k-other-0` … in the page style). */
export const OTHER_COLOURS = 8;

const BY_ACTIVITY: Readonly<Record<StateActivity, StateKind>> = {
  idle: 'idle',
  llm_request: 'llm',
  llm_response: 'llm',
  tool: 'tool',
  tool_run: 'tool',
  check: 'check',
  wait: 'wait',
  compact: 'llm',
};

/** The kind of `state` in a table with `roles`: error and terminal flags first, then its activity, else a colour from its name. */
export function stateKind(state: string, roles: TableRoles): StateKind {
  if (roles.error.has(state)) return 'error';
  if (roles.terminal.has(state)) return 'end';
  if (roles.idle.has(state)) return 'idle';
  const activity = roles.activity.get(state);
  if (activity !== undefined) return BY_ACTIVITY[activity];
  return `other-${nameHash(state) % OTHER_COLOURS}`;
}

/** FNV-1a over the name's UTF-16 units: stable across runs and platforms. */
function nameHash(name: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < name.length; i++) {
    h ^= name.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h;
}

/** What a report needs of one run, gathered in one pass over its history. */
export interface CollectedRun {
  readonly meta: HistoryMeta | undefined;
  readonly summary: HistorySummary;
  readonly records: readonly TransitionRecord<string>[];
  readonly rejected: readonly RejectedMove[];
  /** State names in table order (the run's own table when its file has one), then any others the run visited. */
  readonly order: readonly string[];
  readonly kinds: Readonly<Record<string, StateKind>>;
  /** Seqs of the moves that ended a visit to SendingToLLM / SendingToolResults that needed more than one attempt. */
  readonly retried: ReadonlySet<number>;
  /** Usage over time, cumulative; empty when no record carries usage (`RunFacts.usage`). */
  readonly usage: readonly UsagePoint[];
  /** The usage last recorded (`RunFacts.finalUsage`). */
  readonly finalUsage: RunUsage | null;
  /** What the run spent by the ledger's rule (`RunFacts.spend`): recorded costs plus reservations without a response. */
  readonly spend: RunSpend;
  /** How the run ended, in `RunReport.outcome` terms where it maps (`end_of_turn`, `error`, …), else `incomplete` / `empty` (`RunFacts.outcome`). */
  readonly outcome: string;
  /**
   * Moves left out of `records` (and so of the page's timeline and table), between its first
   * `PAGE_MOVES_KEPT` and its last: a page holds what a person can read, and its maker's memory
   * stays bounded whatever the file's size. The summary, outcome and usage cover every move.
   */
  readonly omittedMoves: number;
}

/** Moves a page keeps from each end of a run: the first this many and the last this many. */
export const PAGE_MOVES_KEPT = 20_000;

/**
 * Gathers a run's moves, rejected moves, usage and summary from its history items (entries
 * read from a file, or plain records). The summary is `summarizeHistory`'s, so the page's
 * failure panel says what `agent-sm inspect` says; outcome, usage and retries are `runFacts`'s,
 * so the page says what every other reader of the file says. Pure; `RunCollector` is the same,
 * an item at a time.
 */
export function collectRun(items: Iterable<HistoryItem>): CollectedRun {
  const collector = new RunCollector();
  let index = 0;
  for (const item of items) collector.add(item, `items[${index++}]`);
  return collector.result();
}

/** `collectRun` an item at a time, for a file streamed: it keeps the moves, never the journal. */
export class RunCollector {
  readonly #summarizer = new HistorySummarizer({ lastMoves: 10 });
  readonly #facts = new RunFactsCollector();
  readonly #records: TransitionRecord<string>[] = [];
  // The last moves past the first PAGE_MOVES_KEPT, from #tailStart on: cut back now and then, not per move.
  #tail: TransitionRecord<string>[] = [];
  #tailStart = 0;
  #omitted = 0;
  // Every state a move visited, kept or not, so the page's state order names them all.
  readonly #states = new Set<string>();
  readonly #rejected: RejectedMove[] = [];
  #table: TransitionTable<string> | undefined;
  #meta: HistoryMeta | undefined;

  /** Takes the next item; `name` labels it in errors. */
  add(item: HistoryItem, name = 'item'): void {
    this.#summarizer.add(item, name);
    this.#facts.add(item, name);
    if (!isHistoryEntry(item)) this.#keep(item);
    else if (item.kind === 'record') this.#keep(item.record);
    else if (item.kind === 'rejected') this.#rejected.push(item.rejected);
    else if (item.kind === 'meta') ({ meta: this.#meta, table: this.#table } = item);
  }

  #keep(record: TransitionRecord<string>): void {
    this.#states.add(record.from).add(record.to);
    if (this.#records.length < PAGE_MOVES_KEPT) {
      this.#records.push(record);
      return;
    }
    this.#tail.push(record);
    if (this.#tail.length - this.#tailStart > PAGE_MOVES_KEPT) {
      this.#tailStart += 1;
      this.#omitted += 1;
      if (this.#tailStart >= PAGE_MOVES_KEPT) {
        this.#tail = this.#tail.slice(this.#tailStart);
        this.#tailStart = 0;
      }
    }
  }

  result(): CollectedRun {
    const records = [...this.#records, ...this.#tail.slice(this.#tailStart)];
    const summary = this.#summarizer.result();
    const base = this.#table ?? (DEFAULT_TABLE as TransitionTable<string>);
    const order = tableStates(base);
    const known = new Set(order);
    const kinds: Record<string, StateKind> = {};
    const roles = tableRoles(base);
    const kindOf = (state: string): StateKind => stateKind(state, roles);
    for (const state of order) kinds[state] = kindOf(state);
    for (const state of this.#states) {
      if (known.has(state)) continue;
      known.add(state);
      order.push(state);
      kinds[state] = kindOf(state);
    }
    const facts = this.#facts.result();
    return {
      meta: this.#meta,
      summary,
      records,
      rejected: this.#rejected.slice(),
      order,
      kinds,
      retried: new Set(facts.retried),
      usage: facts.usage,
      finalUsage: facts.finalUsage,
      spend: facts.spend,
      outcome: facts.outcome,
      omittedMoves: this.#omitted,
    };
  }
}
