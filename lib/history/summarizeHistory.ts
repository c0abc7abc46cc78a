// Past 400 lines: the summary's shape (documented field by field) and the one-pass summarizer
// that fills it.
import { feedItems, type HistoryItems } from './feedItems';
import { assertHistoryItem, assertOptions, assertTableShape } from './assertHistoryInput';
import { HistoryBuffer } from '../machine/HistoryBuffer';
import { isHistoryEntry, type HistoryItem, type HistoryMeta, type RejectedMove } from './HistoryEntry';
import { InvalidArgumentError } from '../machine/InvalidArgumentError';
import type { TransitionRecord } from '../machine/TransitionRecord';
import type { TransitionTable } from '../machine/TransitionTable';
import { DEFAULT_TABLE } from '../machine/transitions';
import { tableRoles } from './tableRoles';
import { stateOutcome, turnOutcomeOf } from './turnOutcomeOf';
import { stallNoteOf, type StallNote } from './stallNoteOf';

/** Options of `summarizeHistory`: the table, how many moves to keep before the end, how many items to list. */
export interface SummarizeHistoryOptions {
  /** The run's table (which states end a turn, which end it badly). Default: the meta line's, else the sixteen-state table. */
  table?: TransitionTable<string>;
  /** How many moves to keep before the end, and before a failure. Default 10. */
  lastMoves?: number;
  /** How many turns, forced moves and rejected moves to list (the latest); their counts are always complete. Default 100. */
  listLimit?: number;
  /**
   * Durations kept per state for an exact median. Past that many visits a state's median comes
   * from a histogram with 1% wide buckets (`medianExact: false`), so memory stays bounded
   * however long the run. Default 10,000.
   */
  exactSamples?: number;
}

/** Where the time went, for one state. */
export interface StateTime {
  readonly state: string;
  /** Visits that ended (the current state's visit has no end yet and is not counted). */
  readonly visits: number;
  readonly totalMs: number;
  /** `totalMs` as a fraction of the time in all states, 0 to 1. */
  readonly share: number;
  readonly medianMs: number;
  readonly maxMs: number;
  /** False when the median comes from the histogram (see `exactSamples`): within 1%. */
  readonly medianExact: boolean;
}

/**
 * One turn: from the first move out of an idle state (the initial state, or one a terminal
 * state leads to, such as WaitingForUserInput) to the next move into a terminal state.
 */
export interface TurnSummary {
  /** 1-based, in order over the whole run. */
  readonly turn: number;
  readonly firstSeq: number;
  readonly lastSeq: number;
  readonly startAt: number;
  readonly endAt: number;
  readonly durationMs: number;
  readonly moves: number;
  readonly forced: number;
  /** `terminal`: it reached a terminal state; `reset`: the machine was reset in it; `open`: the history ends inside it. */
  readonly end: 'terminal' | 'reset' | 'open';
  /** The terminal state it reached, or null. */
  readonly outcome: string | null;
  /**
   * What the turn stood for when its end state cannot say it: a turn that started on a spent
   * budget (or an aborted signal) ends in Error, with `data.outcome` `budget_exceeded` (or `cancelled`).
   */
  readonly standsFor?: string;
  /** The description of its last move. */
  readonly description: string;
}

/** Where and why the run ended badly: the move into the error state that ended its last turn. */
export interface FailureSummary {
  readonly turn: number;
  /** The error state (Error, Cancelled, BudgetExceeded, or a custom one). */
  readonly state: string;
  /** The state it failed in. */
  readonly from: string;
  readonly seq: number;
  /** The line in the history file, when known. */
  readonly line?: number;
  readonly at: number;
  /** How long the machine had been in `from` when it failed. */
  readonly durationMs: number;
  readonly description: string;
  readonly data?: unknown;
  readonly forced: boolean;
  /** The moves up to and including the failing one, oldest first. */
  readonly lastMoves: readonly TransitionRecord<string>[];
}

/** What `summarizeHistory` tells about a run. */
export interface HistorySummary {
  readonly meta?: HistoryMeta;
  /**
   * `empty`: no records. `incomplete`: the history ends inside a turn (the run was killed, or is
   * still going). `failed`: the last turn ended in an error state. `ok`: otherwise.
   */
  readonly status: 'empty' | 'ok' | 'failed' | 'incomplete';
  readonly records: number;
  readonly firstSeq: number | null;
  readonly lastSeq: number | null;
  /** When the machine entered its first state (the first record's time minus its duration). */
  readonly startedAt: number | null;
  /** The time of the last record. */
  readonly endedAt: number | null;
  readonly elapsedMs: number;
  readonly finalState: string | null;
  readonly turns: {
    readonly count: number;
    /** Turns per terminal state reached, e.g. `{ EndOfTurn: 12, Error: 1 }`. */
    readonly outcomes: Readonly<Record<string, number>>;
    /** The latest turns (up to `listLimit`), the open one included. */
    readonly list: readonly TurnSummary[];
  };
  /** Time per state, most time first. */
  readonly states: readonly StateTime[];
  readonly forced: { readonly count: number; readonly list: readonly TransitionRecord<string>[] };
  readonly rejected: { readonly count: number; readonly list: readonly RejectedMove[] };
  readonly resets: number;
  /** Set when the last turn ended in an error state, even if a new turn began after it. */
  readonly failure: FailureSummary | null;
  /** The last moves of the run, oldest first. */
  readonly lastMoves: readonly TransitionRecord<string>[];
  /**
   * Set when the history ends in a state where a turn waits for a person (a `wait` state such
   * as AwaitingApproval): the run is paused, not cut off. `requests` are the move's `data.calls`
   * (the tool calls waiting for approval).
   */
  readonly waiting?: {
    readonly state: string;
    readonly seq: number;
    readonly at: number;
    readonly requests: readonly unknown[];
  };
  /** Set when a stall detector fired (the adapter's `stall`): how often, and the latest (up to `listLimit`). */
  readonly stalls?: { readonly count: number; readonly list: readonly StallNote[] };
}

interface OpenTurn {
  turn: number;
  firstSeq: number;
  lastSeq: number;
  startAt: number;
  endAt: number;
  moves: number;
  forced: number;
  description: string;
}

/**
 * Builds a `HistorySummary` one item at a time, in memory bounded by its options whatever the
 * length of the run: feed it `readHistory(path)` to summarize a million-line file.
 * `summarizeHistory` is the one-call form. Pure: no I/O.
 */
export class HistorySummarizer {
  #table: TransitionTable<string> | undefined;
  #terminal: ReadonlySet<string> = new Set<string>();
  #error: ReadonlySet<string> = new Set<string>();
  #idle: ReadonlySet<string> = new Set<string>();
  #wait: ReadonlySet<string> = new Set<string>();
  readonly #exactSamples: number;
  readonly #lastMoves: HistoryBuffer<TransitionRecord<string>>;
  readonly #turnList: HistoryBuffer<TurnSummary>;
  readonly #forced: HistoryBuffer<TransitionRecord<string>>;
  readonly #rejected: HistoryBuffer<RejectedMove>;
  readonly #states = new Map<string, DurationStats>();
  // No prototype: a state named `constructor` or `toString` must count from zero like any other.
  readonly #outcomes: Record<string, number> = Object.create(null) as Record<string, number>;
  #meta: HistoryMeta | undefined;
  #records = 0;
  #first: TransitionRecord<string> | undefined;
  #last: TransitionRecord<string> | undefined;
  #turnCount = 0;
  #turn: OpenTurn | undefined;
  #forcedCount = 0;
  #rejectedCount = 0;
  #resets = 0;
  #failure: FailureSummary | null = null;
  readonly #stalls: HistoryBuffer<StallNote>;
  #stallCount = 0;

  constructor(options: SummarizeHistoryOptions = {}) {
    assertOptions(options);
    const { table, lastMoves = 10, listLimit = 100, exactSamples = 10_000 } = options;
    if (table !== undefined) assertTableShape(table, 'options.table');
    assertCount(lastMoves, 'lastMoves');
    assertCount(listLimit, 'listLimit');
    assertCount(exactSamples, 'exactSamples');
    this.#exactSamples = exactSamples;
    this.#lastMoves = new HistoryBuffer(lastMoves);
    this.#turnList = new HistoryBuffer(listLimit);
    this.#forced = new HistoryBuffer(listLimit);
    this.#rejected = new HistoryBuffer(listLimit);
    this.#stalls = new HistoryBuffer(listLimit);
    if (table !== undefined) this.#use(table);
  }

  /** Takes the next item: a record, or a line read from a history file; `name` labels it in errors (`items[3]`). */
  add(item: HistoryItem, name = 'item'): void {
    assertHistoryItem(item, name);
    if (!isHistoryEntry(item)) return this.#record(item, undefined);
    switch (item.kind) {
      case 'record':
        return this.#record(item.record, item.line);
      case 'meta':
        this.#meta = item.meta;
        if (this.#table === undefined && this.#records === 0) this.#use(item.table);
        return;
      case 'rejected':
        this.#rejectedCount++;
        this.#rejected.push(item.rejected);
        return;
      case 'reset':
        this.#resets++;
        if (this.#turn !== undefined) this.#turnList.push(closeTurn(this.#turn, 'reset', null));
        this.#turn = undefined;
        this.#failure = null;
        return;
    }
  }

  /** The summary of everything added so far; adding more afterwards is fine. */
  result(): HistorySummary {
    const first = this.#first;
    const last = this.#last;
    const turns = this.#turnList.toArray();
    if (this.#turn !== undefined) turns.push(closeTurn(this.#turn, 'open', null));
    let grandTotal = 0;
    for (const stats of this.#states.values()) grandTotal += stats.total;
    const states = [...this.#states].map(([state, stats]): StateTime => {
      const { median, exact } = stats.median();
      return {
        state,
        visits: stats.count,
        totalMs: stats.total,
        share: grandTotal > 0 ? stats.total / grandTotal : 0,
        medianMs: median,
        maxMs: stats.max,
        medianExact: exact,
      };
    });
    states.sort((a, b) => b.totalMs - a.totalMs || b.visits - a.visits || a.state.localeCompare(b.state));
    const status =
      this.#records === 0
        ? 'empty'
        : this.#turn !== undefined
          ? 'incomplete'
          : this.#failure !== null
            ? 'failed'
            : 'ok';
    const startedAt = first === undefined ? null : first.at - first.durationMs;
    const endedAt = last === undefined ? null : last.at;
    const summary: HistorySummary = {
      status,
      records: this.#records,
      firstSeq: first?.seq ?? null,
      lastSeq: last?.seq ?? null,
      startedAt,
      endedAt,
      elapsedMs: startedAt === null || endedAt === null ? 0 : Math.max(0, endedAt - startedAt),
      finalState: last?.to ?? null,
      turns: { count: this.#turnCount, outcomes: { ...this.#outcomes }, list: turns },
      states,
      forced: { count: this.#forcedCount, list: this.#forced.toArray() },
      rejected: { count: this.#rejectedCount, list: this.#rejected.toArray() },
      resets: this.#resets,
      failure: this.#failure,
      lastMoves: this.#lastMoves.toArray(),
    };
    const waiting =
      last !== undefined && this.#turn !== undefined && this.#wait.has(last.to)
        ? { state: last.to, seq: last.seq, at: last.at, requests: waitingCalls(last.data) }
        : undefined;
    let full = waiting === undefined ? summary : { ...summary, waiting };
    if (this.#stallCount > 0) full = { ...full, stalls: { count: this.#stallCount, list: this.#stalls.toArray() } };
    return this.#meta === undefined ? full : { meta: this.#meta, ...full };
  }

  #use(table: TransitionTable<string>): void {
    this.#table = table;
    ({ terminal: this.#terminal, error: this.#error, idle: this.#idle, wait: this.#wait } = tableRoles(table));
  }

  #record(record: TransitionRecord<string>, line: number | undefined): void {
    if (this.#table === undefined) this.#use(DEFAULT_TABLE as TransitionTable<string>);
    this.#records++;
    this.#first ??= record;
    this.#last = record;
    this.#lastMoves.push(record);
    let stats = this.#states.get(record.from);
    if (stats === undefined) this.#states.set(record.from, (stats = new DurationStats(this.#exactSamples)));
    stats.add(record.durationMs);
    if (record.forced) {
      this.#forcedCount++;
      this.#forced.push(record);
    }

    const terminal = this.#terminal.has(record.to);
    // A move into an idle state between turns (EndOfTurn → WaitingForUserInput) opens none.
    if (this.#turn === undefined && (terminal || !this.#idle.has(record.to))) {
      this.#turn = {
        turn: ++this.#turnCount,
        firstSeq: record.seq,
        lastSeq: record.seq,
        startAt: record.at,
        endAt: record.at,
        moves: 0,
        forced: 0,
        description: '',
      };
    }
    const turn = this.#turn;
    if (turn === undefined) return;
    turn.moves++;
    if (record.forced) turn.forced++;
    turn.lastSeq = record.seq;
    turn.endAt = record.at;
    turn.description = record.description;
    const stall = stallNoteOf(record, turn.turn);
    if (stall !== undefined) {
      this.#stallCount++;
      this.#stalls.push(stall);
    }
    if (!terminal) return;

    const standsFor = outcomeNoted(record.data, record.to);
    this.#turnList.push(
      standsFor === undefined
        ? closeTurn(turn, 'terminal', record.to)
        : { ...closeTurn(turn, 'terminal', record.to), standsFor },
    );
    this.#outcomes[record.to] = (this.#outcomes[record.to] ?? 0) + 1;
    this.#turn = undefined;
    if (!this.#error.has(record.to)) {
      this.#failure = null;
      return;
    }
    const { seq, from, to, at, durationMs, description, data, forced } = record;
    this.#failure = {
      turn: turn.turn,
      state: to,
      from,
      seq,
      ...(line === undefined ? {} : { line }),
      at,
      durationMs,
      description,
      ...(data === undefined ? {} : { data }),
      forced,
      lastMoves: this.#lastMoves.toArray(),
    };
  }
}

/**
 * Summarizes a run: its path (turns and how each ended), time per state (visits, total,
 * median, max), forced and rejected moves, the final state, and, when it ended badly, where
 * and why (the move into Error / Cancelled / BudgetExceeded, with its description and data)
 * and the moves before it. Takes entries read from a file or plain records. Pure. Given an
 * async iterable (`readHistory(file)`), it reads the items as they come, in memory bounded by
 * the options, and resolves with the same summary.
 */
export function summarizeHistory(items: Iterable<HistoryItem>, options?: SummarizeHistoryOptions): HistorySummary;
export function summarizeHistory(
  items: AsyncIterable<HistoryItem>,
  options?: SummarizeHistoryOptions,
): Promise<HistorySummary>;
export function summarizeHistory(
  items: HistoryItems,
  options: SummarizeHistoryOptions = {},
): HistorySummary | Promise<HistorySummary> {
  return feedItems(items, () => new HistorySummarizer(options));
}

/**
 * The outcome a move into `to` stands for when the state alone would say another: Error that
 * records `budget_exceeded`. The adapter records the outcome on every terminal move, so one
 * that merely agrees with its state (EndOfTurn, `end_of_turn`) is no news.
 */
function outcomeNoted(data: unknown, to: string): string | undefined {
  const { outcome, recorded } = turnOutcomeOf(to, data);
  return recorded && outcome !== stateOutcome(to) ? outcome : undefined;
}

function closeTurn(turn: OpenTurn, end: TurnSummary['end'], outcome: string | null): TurnSummary {
  const { firstSeq, lastSeq, startAt, endAt, moves, forced, description } = turn;
  return {
    turn: turn.turn,
    firstSeq,
    lastSeq,
    startAt,
    endAt,
    durationMs: Math.max(0, endAt - startAt),
    moves,
    forced,
    end,
    outcome,
    description,
  };
}

function assertCount(value: unknown, name: string): asserts value is number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1)
    throw new InvalidArgumentError(name, 'a positive integer', value);
}

// Bucket width of the fallback histogram: each bucket spans 1%, so its middle is within 0.5%.
const GROWTH = Math.log(1.01);
// Buckets counted in an array (a Map costs about three times as much per sample): from
// 0.04 µs to 600 years; durations outside that, and zero, are counted in a Map.
const ARRAY_LOW = -1024;
const ARRAY_BUCKETS = 4096;

function bucketOf(ms: number): number {
  return Math.floor(Math.log(ms) / GROWTH);
}

// The buckets of 1 to 1023 whole milliseconds, worked out once: quick states mostly last a
// few, and Math.log was a third of the cost of a sample.
const SMALL_KEYS = Int16Array.from({ length: 1024 }, (_, ms) => (ms === 0 ? 0 : bucketOf(ms)));

/** Count, total, max and median of one state's durations, in bounded memory. */
class DurationStats {
  count = 0;
  total = 0;
  max = 0;
  #samples: number[] | undefined = [];
  #buckets: Float64Array | undefined;
  #outside: Map<number, number> | undefined;
  readonly #limit: number;

  constructor(limit: number) {
    this.#limit = limit;
  }

  add(ms: number): void {
    this.count++;
    this.total += ms;
    if (ms > this.max) this.max = ms;
    if (this.#samples !== undefined) {
      this.#samples.push(ms);
      if (this.#samples.length <= this.#limit) return;
      this.#buckets = new Float64Array(ARRAY_BUCKETS);
      this.#outside = new Map();
      for (const sample of this.#samples) this.#bin(sample);
      this.#samples = undefined;
      return;
    }
    this.#bin(ms);
  }

  median(): { median: number; exact: boolean } {
    if (this.#samples !== undefined) {
      const sorted = this.#samples.slice().sort((a, b) => a - b);
      const mid = sorted.length >> 1;
      if (sorted.length === 0) return { median: 0, exact: true };
      return { median: sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2, exact: true };
    }
    const histogram: Array<[key: number, count: number]> = [...this.#outside!];
    this.#buckets!.forEach((count, index) => {
      if (count > 0) histogram.push([index + ARRAY_LOW, count]);
    });
    histogram.sort((a, b) => a[0] - b[0]);
    const half = this.count / 2;
    let seen = 0;
    for (const [key, count] of histogram) {
      seen += count;
      if (seen >= half)
        return { median: key === -Infinity ? 0 : Math.min(this.max, Math.exp((key + 0.5) * GROWTH)), exact: false };
    }
    return { median: this.max, exact: false };
  }

  #bin(ms: number): void {
    const key = ms <= 0 ? -Infinity : ms < SMALL_KEYS.length && ms === Math.floor(ms) ? SMALL_KEYS[ms]! : bucketOf(ms);
    const index = key - ARRAY_LOW;
    if (index >= 0 && index < ARRAY_BUCKETS) this.#buckets![index]!++;
    else this.#outside!.set(key, (this.#outside!.get(key) ?? 0) + 1);
  }
}

/** The calls a move into a waiting state carries (`data.calls`), or none. */
function waitingCalls(data: unknown): unknown[] {
  const calls = typeof data === 'object' && data !== null ? (data as { calls?: unknown }).calls : undefined;
  return Array.isArray(calls) ? calls : [];
}
