import { feedItems, type HistoryItems } from './feedItems';
import { assertHistoryItem, assertOptions, assertTableShape } from './assertHistoryInput';
import { isHistoryEntry, type HistoryItem, type JournalLineRead } from './HistoryEntry';
import { sharedTableRoles, tableRoles, type TableRoles } from './tableRoles';
import { turnOutcomeOf } from './turnOutcomeOf';
import { dataField } from '../internal/dataField';
import type { TransitionRecord } from '../machine/TransitionRecord';
import type { TransitionTable } from '../machine/TransitionTable';
import { DEFAULT_TABLE } from '../machine/transitions';
import { InvalidArgumentError } from '../machine/InvalidArgumentError';
import type { AttemptSpend } from './spendOverAttempts';
import type { RunSpend } from './RunSpend';
import { LedgerAccount, type RecordedMoney } from './LedgerAccount';

/** Options of `runFacts`: the run's table, when its file does not declare one. */
export interface RunFactsOptions {
  /** Which states end a turn, and which end it badly. Default: the meta line's, else the sixteen-state table. */
  table?: TransitionTable<string>;
  /**
   * Keep every turn, usage point and retried seq for `result()`. Default true. False keeps
   * only the last of each, so a reader streaming a file of any length (the OTLP export) holds
   * the collector in constant memory; `result()` then lists the last finished turn and the
   * open one, the last usage point and no retried seqs.
   */
  retain?: boolean;
}

/** A run's cumulative usage, as far as its records tell. */
export interface RunUsage {
  readonly costUsd: number;
  readonly inputTokens: number;
  readonly outputTokens: number;
  readonly cachedInputTokens: number;
  readonly llmCalls: number;
  readonly toolCalls: number;
}

/** Cumulative usage of a run at one moment (`at`, the time of the record that told it). */
export interface UsagePoint extends RunUsage {
  readonly at: number;
}

/** How one turn ended: from the first move out of an idle state to the move into a terminal one. */
export interface TurnFacts {
  /** 1-based, in order over the whole run (as `summarizeHistory` counts them). */
  readonly turn: number;
  readonly firstSeq: number;
  readonly lastSeq: number;
  /** `terminal`: it reached a terminal state; `reset`: the machine was reset in it; `open`: the history ends inside it. */
  readonly end: 'terminal' | 'reset' | 'open';
  /** The terminal state it reached, or null. */
  readonly state: string | null;
  /**
   * `end_of_turn`, `budget_exceeded`, `error` or `cancelled` (a custom terminal state that
   * records none names itself); `incomplete` for a turn that did not reach a terminal state.
   */
  readonly outcome: string;
  /** True when the terminal record's `data.outcome` said the outcome; false when it was derived from the state. */
  readonly recorded: boolean;
  /** The run's cumulative usage as of the turn's last move; null when no record so far carried usage. */
  readonly usage: RunUsage | null;
}

/** The move into an error state that ended the run's last finished turn. */
export interface FailingMove {
  readonly turn: number;
  readonly seq: number;
  /** The line in the history file, when known. */
  readonly line?: number;
  readonly from: string;
  /** The error state (Error, Cancelled, BudgetExceeded, or a custom one). */
  readonly to: string;
  readonly at: number;
  /** How long the machine had been in `from`. */
  readonly durationMs: number;
  readonly description: string;
  readonly data?: unknown;
  readonly forced: boolean;
  /** The turn's outcome: what the move stands for (a turn on a spent budget moves to Error, yet is `budget_exceeded`). */
  readonly outcome: string;
}

/** What a history tells of how a run went: how it ended, what it spent over time, where it failed. */
export interface RunFacts {
  /**
   * How the run ended: its last finished turn's outcome (`end_of_turn`, `error`, …), as a batch
   * report names it. `empty`: no records. `incomplete`: the history ends inside a turn. `ok`:
   * records, but no turn that reached a terminal state since the last reset.
   */
  readonly outcome: string;
  /** Every turn, in order, the open one last. */
  readonly turns: readonly TurnFacts[];
  /** Set when the last finished turn ended in an error state, even if a new turn began after it; a reset clears it. */
  readonly failingMove: FailingMove | null;
  /** Usage over time, cumulative: a point each time cost, tokens or LLM calls moved from the last point (or from zero); empty when none did. */
  readonly usage: readonly UsagePoint[];
  /** The usage last recorded (tool calls included, which alone add no point); null when no record carries usage. */
  readonly finalUsage: RunUsage | null;
  /** Seqs of the moves whose data reports an LLM call that took more than one attempt. */
  readonly retried: readonly number[];
  /** What the run spent by the ledger's rule: every reader that reports spend reads it here. */
  readonly spend: RunSpend;
}

interface OpenTurn {
  readonly turn: number;
  readonly firstSeq: number;
  lastSeq: number;
}

const NO_USAGE: RunUsage = {
  costUsd: 0,
  inputTokens: 0,
  outputTokens: 0,
  cachedInputTokens: 0,
  llmCalls: 0,
  toolCalls: 0,
};

/**
 * Builds a run's `RunFacts` one item at a time, for any table and any history file, old ones
 * included: it prefers what a terminal record says (`data.outcome`, `data.usage`) and derives
 * the same from the other records where a file predates them. `add` returns the turn an item
 * ended, so a reader that streams a file (the OTLP export) learns each turn's outcome as it
 * passes. `runFacts` is the one-call form. Pure: no I/O.
 */
export class RunFactsCollector {
  #roles: TableRoles | undefined;
  #records = 0;
  #turnCount = 0;
  #open: OpenTurn | undefined;
  readonly #turns: TurnFacts[] = [];
  #failing: FailingMove | null = null;
  readonly #points: UsagePoint[] = [];
  #usage: RunUsage | null = null;
  readonly #retried: number[] = [];
  /** The uncertain and released USD, and the calls of unknown cost, the last running totals said (`data.usage`). */
  #recordedUncertain = 0;
  #recordedReleased = 0;
  #recordedUnpriced = 0;
  readonly #ledger = new LedgerAccount();
  readonly #retain: boolean = true;
  #lastTurn: TurnFacts | undefined;
  #lastPoint: UsagePoint | undefined;

  constructor(options: RunFactsOptions = {}) {
    assertOptions(options);
    if (options.table !== undefined) {
      assertTableShape(options.table, 'options.table');
      this.#roles = sharedTableRoles(options.table);
    }
    if (options.retain !== undefined && typeof options.retain !== 'boolean')
      throw new InvalidArgumentError('options.retain', 'true or false', options.retain);
    this.#retain = options.retain !== false;
  }

  /**
   * Takes the next item: a record, or a line read from a history file; `name` labels it in
   * errors (`items[3]`). Returns the turn this item ended (a move into a terminal state, or a
   * reset inside a turn), else undefined.
   */
  add(item: HistoryItem, name = 'item'): TurnFacts | undefined {
    assertHistoryItem(item, name);
    if (!isHistoryEntry(item)) return this.#record(item, undefined);
    switch (item.kind) {
      case 'record':
        return this.#record(item.record, item.line);
      case 'meta':
        if (this.#roles === undefined && this.#records === 0) this.#roles = tableRoles(item.table);
        return undefined;
      case 'rejected':
        return undefined;
      case 'journal':
        this.#ledger.take(item.journal);
        return undefined;
      case 'reset':
        return this.takeReset();
    }
  }

  // The `take` methods are `add` without its checks and without an entry around the item, for
  // what the library made itself (a run's sink hears its machine's records and journal lines):
  // valid by construction, and a batch hears a dozen or more a run.

  /** `add` of a record the library made. @internal */
  takeRecord(record: TransitionRecord<string>): TurnFacts | undefined {
    return this.#record(record, undefined);
  }

  /** `add` of a journal line the library wrote. @internal */
  takeJournal(line: JournalLineRead): void {
    this.#ledger.take(line);
  }

  /** `add` of a reset of the machine. @internal */
  takeReset(): TurnFacts | undefined {
    this.#failing = null;
    const open = this.#open;
    if (open === undefined) return undefined;
    this.#open = undefined;
    return this.#close(open, 'reset', null, 'incomplete', false);
  }

  /** The run's cumulative usage as of the items added so far; null when none carried usage. */
  get usage(): RunUsage | null {
    return this.#usage;
  }

  /** What the run spent so far, by the ledger's rule (`RunSpend`). */
  get spend(): RunSpend {
    return this.#ledger.spend(this.#recorded());
  }

  /**
   * What this file's attempt spent, the parts apart, for a reader that adds up a resumed run's
   * attempts (`spendOverAttempts`). @internal
   */
  get attemptSpend(): AttemptSpend {
    return this.#ledger.attemptSpend(this.#recorded());
  }

  #recorded(): RecordedMoney {
    return {
      costUsd: this.#usage?.costUsd ?? 0,
      uncertainUsd: this.#recordedUncertain,
      releasedUsd: this.#recordedReleased,
      unpricedCalls: this.#recordedUnpriced,
    };
  }

  /** The facts of everything added so far; adding more afterwards is fine. */
  result(): RunFacts {
    const turns = this.#retain || this.#lastTurn === undefined ? this.#turns.slice() : [this.#lastTurn];
    const open = this.#open;
    if (open !== undefined)
      turns.push({
        turn: open.turn,
        firstSeq: open.firstSeq,
        lastSeq: open.lastSeq,
        end: 'open',
        state: null,
        outcome: 'incomplete',
        recorded: false,
        usage: this.#usage,
      });
    return {
      outcome: this.#outcome(),
      turns,
      failingMove: this.#failing,
      usage: this.#retain || this.#lastPoint === undefined ? this.#points.slice() : [this.#lastPoint],
      finalUsage: this.#usage,
      retried: this.#retried.slice(),
      spend: this.spend,
    };
  }

  #outcome(): string {
    if (this.#records === 0) return 'empty';
    if (this.#open !== undefined) return 'incomplete';
    const last = this.#lastTurn;
    return last?.end === 'terminal' ? last.outcome : 'ok';
  }

  #record(record: TransitionRecord<string>, line: number | undefined): TurnFacts | undefined {
    const roles = (this.#roles ??= tableRoles(DEFAULT_TABLE as TransitionTable<string>));
    this.#records++;
    this.#readUsage(record);
    if (this.#retain && wasRetried(record.data)) this.#retried.push(record.seq);

    const terminal = roles.terminal.has(record.to);
    // A move into an idle state between turns (EndOfTurn → WaitingForUserInput) opens none.
    if (this.#open === undefined && (terminal || !roles.idle.has(record.to)))
      this.#open = { turn: ++this.#turnCount, firstSeq: record.seq, lastSeq: record.seq };
    const open = this.#open;
    if (open === undefined) return undefined;
    open.lastSeq = record.seq;
    if (!terminal) return undefined;

    this.#open = undefined;
    const { outcome, recorded } = turnOutcomeOf(record.to, record.data);
    if (!roles.error.has(record.to)) this.#failing = null;
    else {
      const { seq, from, to, at, durationMs, description, data, forced } = record;
      this.#failing = {
        turn: open.turn,
        seq,
        ...(line === undefined ? {} : { line }),
        from,
        to,
        at,
        durationMs,
        description,
        ...(data === undefined ? {} : { data }),
        forced,
        outcome,
      };
    }
    return this.#close(open, 'terminal', record.to, outcome, recorded);
  }

  #close(open: OpenTurn, end: TurnFacts['end'], state: string | null, outcome: string, recorded: boolean): TurnFacts {
    const turn: TurnFacts = {
      turn: open.turn,
      firstSeq: open.firstSeq,
      lastSeq: open.lastSeq,
      end,
      state,
      outcome,
      recorded,
      usage: this.#usage,
    };
    this.#lastTurn = turn;
    if (this.#retain) this.#turns.push(turn);
    return turn;
  }

  /**
   * Usage from the record's `data.usage`, whatever else the data holds. The adapter writes its
   * running totals there (they carry `llmCalls`), on every response and on the move that ends a
   * turn; a `usage` without `llmCalls` is taken as one response's usage and added up. Fields
   * that are not finite numbers count as absent.
   */
  #readUsage(record: TransitionRecord<string>): void {
    const usage = dataField(record.data, 'usage');
    if (typeof usage !== 'object' || usage === null || Array.isArray(usage)) return;
    // finiteField, not a closure made per record: the bundle's keepNames names each closure as it is made.
    const u = usage as Record<string, unknown>;
    if (
      finiteField(u, 'costUsd') === undefined &&
      finiteField(u, 'inputTokens') === undefined &&
      finiteField(u, 'outputTokens') === undefined
    )
      return;
    const sum = this.#usage ?? NO_USAGE;
    const llmCalls = finiteField(u, 'llmCalls');
    const next: RunUsage =
      llmCalls !== undefined
        ? {
            costUsd: finiteField(u, 'costUsd') ?? sum.costUsd,
            inputTokens: finiteField(u, 'inputTokens') ?? sum.inputTokens,
            outputTokens: finiteField(u, 'outputTokens') ?? sum.outputTokens,
            cachedInputTokens: finiteField(u, 'cachedInputTokens') ?? sum.cachedInputTokens,
            llmCalls,
            toolCalls: finiteField(u, 'toolCalls') ?? sum.toolCalls,
          }
        : {
            costUsd: sum.costUsd + (finiteField(u, 'costUsd') ?? 0),
            inputTokens: sum.inputTokens + (finiteField(u, 'inputTokens') ?? 0),
            outputTokens: sum.outputTokens + (finiteField(u, 'outputTokens') ?? 0),
            cachedInputTokens: sum.cachedInputTokens + (finiteField(u, 'cachedInputTokens') ?? 0),
            llmCalls: sum.llmCalls + 1,
            toolCalls: sum.toolCalls,
          };
    this.#usage = next;
    if (llmCalls !== undefined) {
      this.#recordedUncertain = finiteField(u, 'uncertainUsd') ?? this.#recordedUncertain;
      this.#recordedReleased = finiteField(u, 'releasedUsd') ?? this.#recordedReleased;
      this.#recordedUnpriced = finiteField(u, 'unpricedCalls') ?? this.#recordedUnpriced;
    }
    // The charts draw cost and tokens: a point where only the tool count moved would add nothing
    // to them. A run starts at zero, so a turn that ends before any call (its record saying
    // "nothing spent") adds none either.
    const prev = this.#lastPoint ?? NO_USAGE;
    if (
      prev.costUsd === next.costUsd &&
      prev.inputTokens === next.inputTokens &&
      prev.outputTokens === next.outputTokens &&
      prev.llmCalls === next.llmCalls
    )
      return;
    this.#lastPoint = { at: record.at, ...next };
    if (this.#retain) this.#points.push(this.#lastPoint);
  }
}

/**
 * What a run's history tells of how it went: how it ended (per turn and overall), its usage
 * over time, the move that failed it, and the LLM calls that were retried. Works for any table
 * a file declares and for files written before terminal records carried `outcome` and `usage`.
 * Takes entries read from a file or plain records. Pure. Given an async iterable
 * (`readHistory(file)`), it reads the items as they come (in constant memory with
 * `retain: false`) and resolves with the same facts.
 */
export function runFacts(items: Iterable<HistoryItem>, options?: RunFactsOptions): RunFacts;
export function runFacts(items: AsyncIterable<HistoryItem>, options?: RunFactsOptions): Promise<RunFacts>;
export function runFacts(items: HistoryItems, options: RunFactsOptions = {}): RunFacts | Promise<RunFacts> {
  return feedItems(items, () => new RunFactsCollector(options));
}

/**
 * A move whose LLM call took more than one attempt: the adapter's `attempts` (on a response), else
 * its `failures` (on a failure, every attempt made failed: one failure is one attempt, not a retry).
 */
function wasRetried(data: unknown): boolean {
  const attempts = dataField(data, 'attempts');
  if (typeof attempts === 'number') return attempts > 1;
  const failures = dataField(data, 'failures');
  return Array.isArray(failures) && failures.length > 1;
}

/** `u[key]` when it is a finite number, else undefined. */
function finiteField(u: Record<string, unknown>, key: string): number | undefined {
  const value = u[key];
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}
