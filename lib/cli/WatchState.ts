import { failureReason } from '../history/failureReason';
import type { HistoryEntry } from '../history/HistoryEntry';
import { RunFactsCollector, type RunUsage } from '../history/runFacts';
import type { AttemptSpend } from '../history/spendOverAttempts';
import { NO_MONEY, spendOfRun } from '../history/spendOfRun';
import { sumRunMoney } from '../history/sumRunMoney';
import type { SpendFigures } from '../internal/formatSpend';
import { tableRoles, type TableRoles } from '../history/tableRoles';
import type { TransitionTable } from '../machine/TransitionTable';
import { DEFAULT_TABLE } from '../machine/transitions';

/** One run as `watch` sees it. */
export interface WatchedRun {
  readonly id: string;
  /** The state it is in, from its last move; undefined before its first. */
  state: string | undefined;
  /** When it entered that state, epoch ms. */
  since: number | undefined;
  /** How its last turn ended, once it has (`end_of_turn`, `error`, …); undefined while one is open or none has run. */
  outcome: string | undefined;
  /** Its usage as its records tell it (tokens, calls); null when none carries usage. */
  usage: RunUsage | null;
  /**
   * What it spent by the ledger's rule, as `inspect` reads it (`RunSpend`): the costs recorded,
   * the reservations left without an answer at their worst case, and the attempts a resume set
   * aside; the three figures apart, with why money is uncertain.
   */
  spend: WatchSpend;
  /** Why it failed: the failing move's description and data's error, when the turn ended in an error state. */
  reason: string | undefined;
  /** The file could not be read past some line: why. */
  unreadable: string | undefined;
}

/** A run's money as `watch` shows it: billed + uncertain (`costUsd`, what caps count), its uncertain part with why, and what was released. */
export type WatchSpend = Required<SpendFigures>;

/** Something `watch` prints as it happens (on a TTY the latest are shown under the board). */
export interface WatchEvent {
  readonly at: number;
  readonly id: string;
  readonly kind: 'started' | 'finished' | 'failed' | 'unreadable';
  readonly text: string;
}

/**
 * What a batch folder (or one run's file) says so far, built from the lines of its files as
 * they are read, in any order between files: per run its current state and time in it, its
 * spend, how it ended and why it failed, and the events worth a line. Pure: no I/O, no clock
 * (times are the files' own). Roles of states come from each file's table, never from names.
 */
export class WatchState {
  readonly runs = new Map<string, WatchedRun>();
  readonly events: WatchEvent[] = [];
  /** Tasks of the manifest, in order, when there is one. */
  tasks: string[] | undefined;
  /**
   * The batch of the manifest is no longer running (its folder's lock is gone), as of files
   * read whole since: its tasks that never wrote a file were skipped, and its runs whose file
   * did not end were cut off. Set by the watcher, which alone can see the lock.
   */
  over = false;
  readonly #facts = new Map<string, RunFactsCollector>();
  readonly #roles = new Map<string, TableRoles>();
  /** What the attempts a resume set aside spent, by run. */
  readonly #earlier = new Map<string, readonly AttemptSpend[]>();
  /** The events kept for the screen; older ones have been printed or scrolled away. */
  readonly maxEvents: number;

  constructor(maxEvents = 200) {
    this.maxEvents = maxEvents;
  }

  /** The run `id`, made on first sight. */
  run(id: string): WatchedRun {
    let run = this.runs.get(id);
    if (run === undefined) {
      run = {
        id,
        state: undefined,
        since: undefined,
        outcome: undefined,
        usage: null,
        spend: NO_MONEY,
        reason: undefined,
        unreadable: undefined,
      };
      this.runs.set(id, run);
      this.#facts.set(id, new RunFactsCollector({ retain: false }));
    }
    return run;
  }

  /** Takes the next line of run `id`'s file; returns the events it made. */
  add(id: string, entry: HistoryEntry): WatchEvent[] {
    const run = this.run(id);
    const facts = this.#facts.get(id)!;
    if (entry.kind === 'meta') this.#roles.set(id, tableRoles(entry.table));
    const ended = facts.add(entry);
    run.usage = facts.usage;
    if (entry.kind === 'record' || entry.kind === 'journal') run.spend = this.#spendOf(id, facts);
    const made: WatchEvent[] = [];
    if (entry.kind !== 'record') return made;
    const r = entry.record;
    const roles = this.#roles.get(id) ?? tableRoles(DEFAULT_TABLE as TransitionTable<string>);
    if (run.state === undefined) made.push(this.#event(r.at, id, 'started', `${id}: started`));
    // A move out of the idle states opens a new turn: the last one's ending is history.
    if (run.outcome !== undefined && !roles.idle.has(r.to) && ended === undefined) {
      run.outcome = undefined;
      run.reason = undefined;
    }
    run.state = r.to;
    run.since = r.at;
    if (ended?.end === 'terminal') {
      run.outcome = ended.outcome;
      if (roles.error.has(r.to)) {
        run.reason = failureReason(r.description, r.data);
        made.push(this.#event(r.at, id, 'failed', `${id}: ${ended.outcome} in ${r.from}: ${run.reason}`));
      } else made.push(this.#event(r.at, id, 'finished', `${id}: ${ended.outcome}`));
    }
    return made;
  }

  /**
   * What the attempts of run `id` a resume set aside spent (`<file>.interrupted`, …, the oldest
   * first): its spend adds them up as `inspect` does (`spendOverAttempts`).
   */
  earlier(id: string, attempts: readonly AttemptSpend[]): void {
    this.run(id);
    this.#earlier.set(id, attempts);
    this.runs.get(id)!.spend = this.#spendOf(id, this.#facts.get(id)!);
  }

  /** Run `id`'s money by the ledger's rule over all its attempts: `readBatchFolder`'s rule (`spendOfRun`). */
  #spendOf(id: string, facts: RunFactsCollector): WatchSpend {
    return spendOfRun(facts.spend, facts.attemptSpend, this.#earlier.get(id) ?? []);
  }

  /** Run `id`'s file could not be read on: it is listed with why. */
  unreadable(id: string, why: string, at: number): WatchEvent {
    const run = this.run(id);
    run.unreadable = why;
    return this.#event(at, id, 'unreadable', `${id}: unreadable: ${why}`);
  }

  /**
   * Whether every task of the manifest is reported (its turn ended, its file unreadable, or the
   * batch over: skipped or cut off), or, without a manifest, every run seen has ended its turn.
   */
  get ended(): boolean {
    if (this.tasks !== undefined && this.over) return true;
    const ids = this.tasks ?? [...this.runs.keys()];
    if (ids.length === 0) return false;
    return ids.every((id) => {
      const run = this.runs.get(id);
      return run !== undefined && (run.outcome !== undefined || run.unreadable !== undefined);
    });
  }

  /**
   * The batch's spend so far, summed over its runs: tokens and calls as their records tell them,
   * money by the ledger's rule (`WatchedRun.spend`), the figure `inspect` says.
   */
  get spend(): RunUsage & WatchSpend {
    const sum = { inputTokens: 0, outputTokens: 0, cachedInputTokens: 0, llmCalls: 0, toolCalls: 0 };
    for (const run of this.runs.values()) {
      const u = run.usage;
      if (u === null) continue;
      sum.inputTokens += u.inputTokens;
      sum.outputTokens += u.outputTokens;
      sum.cachedInputTokens += u.cachedInputTokens;
      sum.llmCalls += u.llmCalls;
      sum.toolCalls += u.toolCalls;
    }
    // The sum `inspect` says (`readBatchFolder`'s totals): one function, so the two agree.
    return { ...sum, ...sumRunMoney([...this.runs.values()].map((r) => r.spend)) };
  }

  #event(at: number, id: string, kind: WatchEvent['kind'], text: string): WatchEvent {
    const event = { at, id, kind, text };
    this.events.push(event);
    if (this.events.length > this.maxEvents) this.events.shift();
    return event;
  }
}
