import { failureReason } from './failureReason';
import { isHistoryEntry, type HistoryItem, type JournalLineRead } from './HistoryEntry';
import { RunFactsCollector, type RunUsage } from './runFacts';
import type { RunSpend } from './RunSpend';
import type { AttemptSpend } from './spendOverAttempts';
import type { TransitionRecord } from '../machine/TransitionRecord';
import type { TransitionTable } from '../machine/TransitionTable';

/** What one run's history file says of how the run went, as a batch's readers list it. */
export interface RunFileFacts {
  /**
   * The run's outcome by `RunFacts`: its last finished turn's (`end_of_turn`, `error`, …), or
   * `incomplete` (the file ends inside a turn), `empty` (no moves), `ok` (no turn ended).
   */
  readonly outcome: string;
  /** Its last turn reached a terminal state: the run ended. */
  readonly ended: boolean;
  /** Why it failed (the failing move, `failureReason`), when its last finished turn ended in an error state. */
  readonly reason: string | undefined;
  /** Its usage as its records tell it; null when none carries usage. */
  readonly usage: RunUsage | null;
  /** What it spent, by the ledger's rule (`RunSpend.costUsd`): billed plus uncertain. */
  readonly costUsd: number;
  /** Of `costUsd`, what may have been billed but reported no usage, at its worst case (`RunSpend.uncertainUsd`). */
  readonly uncertainUsd: number;
  /** Holds let go, provably not billed (`RunSpend.releasedUsd`). */
  readonly releasedUsd: number;
  /** Why money is uncertain, most calls first (`RunSpend.uncertain`). */
  readonly uncertain: RunSpend['uncertain'];
  /** LLM calls of unknown cost, in none of the dollars (`RunSpend.unpricedCalls`), and why (`RunSpend.unpriced`). */
  readonly unpricedCalls: number;
  readonly unpriced: RunSpend['unpriced'];
  /**
   * The same, the parts apart (what its records carry, the requests it made, the reservations it
   * left without an answer): a resumed run's attempts add up by `spendOverAttempts`.
   */
  readonly attempt: AttemptSpend;
  /** Moves (records) in the file. */
  readonly transitions: number;
  /** From the file's start (its meta line, else its first move's start) to its last move; 0 without moves. */
  readonly durationMs: number;
  /** The state its last move entered, and that move's seq; undefined without moves. */
  readonly lastState: string | undefined;
  readonly lastSeq: number | undefined;
}

/**
 * Builds a run file's `RunFileFacts` one item at a time: from the lines `readRunFile` reads,
 * or from what a run's sink writes as it writes it (a batch learns how each run's file ended
 * without reading it back). Pure: no I/O. `table`: the file's, when no meta line is added.
 */
export class RunFileFactsCollector {
  readonly #facts: RunFactsCollector;
  #transitions = 0;
  #startedAt: number | undefined;
  #lastAt: number | undefined;
  #lastState: string | undefined;
  #lastSeq: number | undefined;

  constructor(table?: TransitionTable<string>) {
    this.#facts = new RunFactsCollector(table === undefined ? { retain: false } : { retain: false, table });
  }

  /** When the run started, as its meta line says (a file without one starts at its first move). */
  started(at: number): void {
    this.#startedAt ??= at;
  }

  /** The next line of the file, checked as `RunFactsCollector.add` checks it. */
  add(item: HistoryItem): void {
    this.#facts.add(item);
    let record: TransitionRecord<string>;
    if (!isHistoryEntry(item)) record = item;
    else if (item.kind === 'record') record = item.record;
    else {
      if (item.kind === 'meta') this.started(item.meta.startedAt);
      return;
    }
    this.#counted(record);
  }

  /**
   * A record the run's sink writes, as it writes it: the library made it, so it is taken
   * unchecked (see `RunFactsCollector.takeRecord`). The same facts as `add` of its line.
   */
  record(record: TransitionRecord<string>): void {
    this.#facts.takeRecord(record);
    this.#counted(record);
  }

  /** A journal line the run's sink writes; unchecked, as `record`. */
  journal(line: JournalLineRead): void {
    this.#facts.takeJournal(line);
  }

  /** A reset the run's sink writes. */
  reset(): void {
    this.#facts.takeReset();
  }

  #counted(record: TransitionRecord<string>): void {
    this.#transitions += 1;
    this.#startedAt ??= record.at - record.durationMs;
    this.#lastAt = record.at;
    this.#lastState = record.to;
    this.#lastSeq = record.seq;
  }

  result(): RunFileFacts {
    const result = this.#facts.result();
    const last = result.turns.at(-1);
    const failing = result.failingMove;
    const startedAt = this.#startedAt;
    const lastAt = this.#lastAt;
    return {
      outcome: result.outcome,
      ended: last !== undefined && last.end === 'terminal',
      reason: failing === null ? undefined : failureReason(failing.description, failing.data),
      usage: result.finalUsage,
      costUsd: result.spend.costUsd,
      uncertainUsd: result.spend.uncertainUsd,
      releasedUsd: result.spend.releasedUsd,
      uncertain: result.spend.uncertain,
      unpricedCalls: result.spend.unpricedCalls,
      unpriced: result.spend.unpriced,
      attempt: this.#facts.attemptSpend,
      transitions: this.#transitions,
      durationMs: startedAt === undefined || lastAt === undefined ? 0 : Math.max(0, lastAt - startedAt),
      lastState: this.#lastState,
      lastSeq: this.#lastSeq,
    };
  }
}
