import { feedItems, type HistoryItems } from './feedItems';
import { assertHistoryItem } from './assertHistoryInput';
import { isHistoryEntry, type HistoryItem } from './HistoryEntry';
import type { TransitionRecord } from '../machine/TransitionRecord';
import type { TransitionTable } from '../machine/TransitionTable';
import { DEFAULT_TABLE } from '../machine/transitions';
import { tableRoles } from './tableRoles';
import { TransitionValidator } from '../machine/TransitionValidator';

interface IssueBase {
  /** The seq of the record where the problem shows. */
  readonly seq: number;
  /** Its line in the file, when the records came from one. */
  readonly line?: number;
  /** The problem in words, without the position (that is in `seq` and `line`). */
  readonly message: string;
}

/** One problem found by replaying a history against its table; keyed by `code`. */
export type HistoryIssue =
  /** A move the table does not allow, and not marked `forced`. */
  | (IssueBase & {
      readonly code: 'illegal_move';
      readonly from: string;
      readonly to: string;
      readonly allowed: readonly string[];
    })
  /**
   * The record's `from` is not where the previous record (or a reset) left the machine; for the
   * first record of a file with a meta line, not the table's initial state.
   */
  | (IssueBase & {
      readonly code: 'broken_chain';
      readonly expected: string;
      readonly actual: string;
      readonly afterReset: boolean;
    })
  /** Sequence numbers skip: `missing` records were lost before this one (for a file with a meta line, also at its start). */
  | (IssueBase & { readonly code: 'seq_gap'; readonly expected: number; readonly missing: number })
  /** A sequence number repeats or goes back: records duplicated or out of order. */
  | (IssueBase & { readonly code: 'seq_out_of_order'; readonly expected: number })
  /** The record is timed before the previous one. */
  | (IssueBase & { readonly code: 'time_backwards'; readonly at: number; readonly previousAt: number })
  /** A state the table does not have. */
  | (IssueBase & { readonly code: 'unknown_state'; readonly state: string; readonly field: 'from' | 'to' })
  /** A negative time in `from`, which the machine never writes. */
  | (IssueBase & { readonly code: 'negative_duration'; readonly durationMs: number })
  /** A journal line whose `seq` is not the last record before it: the journal and the moves disagree on order. */
  | (IssueBase & { readonly code: 'journal_out_of_place'; readonly expected: number });

/** An issue's own fields, for each code (the position is added where it is found). */
type IssueDetails = HistoryIssue extends infer I ? (I extends HistoryIssue ? Omit<I, 'seq' | 'line'> : never) : never;

/** The verdict: every problem at once, in the order the records were given. */
export type HistoryValidation = (
  | { readonly ok: true; readonly records: number; readonly issues: readonly [] }
  | { readonly ok: false; readonly records: number; readonly issues: readonly HistoryIssue[] }
) & {
  /**
   * Set for a file (one with a meta line) whose last move is not into a terminal state, or
   * that holds no move: the run was cut off mid-turn — killed, or still running. Its moves
   * may all be valid (`ok`), but the file does not say how the run ended.
   */
  readonly interrupted?: { readonly seq: number; readonly lastState: string; readonly message: string };
};

/**
 * Replays a history one item at a time, so a file of any length can be checked while it is
 * read (`for await (const e of readHistory(path)) validator.add(e)`); `validateHistory` is
 * the one-call form. Without a table it uses the one in the file's meta line when the first
 * item is that line, else the sixteen-state table. Pure: no I/O.
 */
export class HistoryValidator {
  #table: TransitionTable<string> | undefined;
  #validator: TransitionValidator<string> | undefined;
  readonly #issues: HistoryIssue[] = [];
  #records = 0;
  #previous: TransitionRecord<string> | undefined;
  #afterReset = false;
  /**
   * Set by a meta line before any record: the file was written from the machine's creation,
   * so its first record is seq 1 (or the one after a leading reset) from the initial state.
   * Plain records get no such check: a bounded in-memory history may start mid-run.
   */
  #fromStart = false;
  /** The seq a leading reset line gave, before any record. */
  #resetSeq: number | undefined;

  constructor(table?: TransitionTable<string>) {
    this.#table = table;
    if (table !== undefined) this.#validator = new TransitionValidator<string>(table);
  }

  /** Takes the next item: a record, or a line read from a history file; `name` labels it in errors (`items[3]`). Throws `InvalidArgumentError` for anything else. */
  add(item: HistoryItem, name = 'item'): void {
    assertHistoryItem(item, name);
    if (!isHistoryEntry(item)) return this.#record(item, undefined);
    switch (item.kind) {
      case 'meta':
        if (this.#records === 0) {
          if (this.#validator === undefined) this.#use(item.table);
          this.#fromStart = true;
        }
        return;
      case 'record':
        return this.#record(item.record, item.line);
      case 'reset':
        this.#afterReset = true;
        if (this.#previous === undefined) this.#resetSeq = item.reset.seq;
        return;
      case 'rejected':
        return;
      case 'journal':
      case 'http': {
        // The sink stamps each journal line with the last record it wrote; a file read whole must agree.
        const expected = this.#previous?.seq ?? this.#resetSeq ?? 0;
        const { seq, type } = item.kind === 'journal' ? item.journal : item.exchange;
        if (this.#fromStart && seq !== expected) {
          this.#issues.push({
            seq,
            line: item.line,
            code: 'journal_out_of_place',
            expected,
            message: `the ${type} journal line says it follows record ${seq}, but it follows record ${expected}`,
          });
        }
        return;
      }
    }
  }

  /** The problems so far, as a verdict. */
  result(): HistoryValidation {
    const issues = this.#issues.slice();
    const verdict: HistoryValidation =
      issues.length === 0
        ? { ok: true, records: this.#records, issues: [] }
        : { ok: false, records: this.#records, issues };
    const interrupted = this.#interrupted();
    return interrupted === undefined ? verdict : { ...verdict, interrupted };
  }

  /**
   * A file says how its run ended; one that does not was cut off. Plain records (a bounded
   * in-memory history, a run still going) get no such check.
   */
  #interrupted(): HistoryValidation['interrupted'] {
    if (!this.#fromStart) return undefined;
    const last = this.#previous;
    const state = last?.to ?? (this.#table ?? DEFAULT_TABLE).initial;
    if (last !== undefined && this.#table?.states[state]?.isTerminal === true) return undefined;
    // A run stopped where a turn waits for a person (AwaitingApproval) is paused, not cut off.
    if (last !== undefined && tableRoles(this.#table ?? DEFAULT_TABLE).wait.has(state)) return undefined;
    const where =
      last === undefined ? 'it holds no move' : `its last move is ${last.from} → ${last.to} (seq ${last.seq})`;
    return { seq: last?.seq ?? 0, lastState: state, message: `ended without a terminal move (interrupted?): ${where}` };
  }

  #use(table: TransitionTable<string>): TransitionValidator<string> {
    this.#table = table;
    return (this.#validator = new TransitionValidator<string>(table));
  }

  /** A method, not a closure made per record: with the bundle's keepNames each closure costs a defineProperty (15% of `validate`). */
  #report(seq: number, line: number | undefined, details: IssueDetails): void {
    this.#issues.push((line === undefined ? { seq, ...details } : { seq, line, ...details }) as HistoryIssue);
  }

  #record(record: TransitionRecord<string>, line: number | undefined): void {
    const validator = this.#validator ?? this.#use(DEFAULT_TABLE as TransitionTable<string>);
    const table = this.#table!;
    const { seq, from, to } = record;
    this.#records++;
    const previous = this.#previous;

    if (previous === undefined && this.#fromStart) {
      const expected = (this.#resetSeq ?? 0) + 1;
      if (seq > expected) {
        const missing = seq - expected;
        this.#report(seq, line, {
          code: 'seq_gap',
          expected,
          missing,
          message: `the file's first record is seq ${seq}, not ${expected}: ${missing} record${missing === 1 ? '' : 's'} lost at the start`,
        });
      } else if (seq < expected) {
        this.#report(seq, line, {
          code: 'seq_out_of_order',
          expected,
          message: `the file's first record is seq ${seq}: expected ${expected}`,
        });
      }
    }
    if (previous !== undefined) {
      const expected = previous.seq + 1;
      if (seq > expected) {
        const missing = seq - expected;
        this.#report(seq, line, {
          code: 'seq_gap',
          expected,
          missing,
          message: `seq jumps from ${previous.seq} to ${seq}: ${missing} record${missing === 1 ? '' : 's'} lost`,
        });
      } else if (seq < expected) {
        this.#report(seq, line, {
          code: 'seq_out_of_order',
          expected,
          message: `seq ${seq} after ${previous.seq}: expected ${expected} (a record repeated or out of order)`,
        });
      }
      if (record.at < previous.at) {
        this.#report(seq, line, {
          code: 'time_backwards',
          at: record.at,
          previousAt: previous.at,
          message: `time goes back ${previous.at - record.at} ms: at ${record.at} after ${previous.at} (seq ${previous.seq})`,
        });
      }
    }
    const atStart = previous === undefined && this.#fromStart && !this.#afterReset;
    const expectedFrom = this.#afterReset || atStart ? table.initial : previous?.to;
    if (expectedFrom !== undefined && from !== expectedFrom) {
      const message = atStart
        ? `starts from ${from}, but the first record of a file starts from the initial state ${expectedFrom}: records were lost at the start`
        : `starts from ${from}, but ${this.#afterReset ? 'the reset before it' : `seq ${previous!.seq}`} left the machine in ${expectedFrom}`;
      this.#report(seq, line, {
        code: 'broken_chain',
        expected: expectedFrom,
        actual: from,
        afterReset: this.#afterReset,
        message,
      });
    }
    if (record.durationMs < 0) {
      this.#report(seq, line, {
        code: 'negative_duration',
        durationMs: record.durationMs,
        message: `durationMs is ${record.durationMs}; time in a state is never negative`,
      });
    }
    // Both fields checked, named, not looped over a list: this runs once per line of a file.
    const fromKnown = validator.isKnown(from);
    if (!fromKnown) this.#report(seq, line, unknownState(validator, 'from', from));
    const toKnown = validator.isKnown(to);
    if (!toKnown) this.#report(seq, line, unknownState(validator, 'to', to));
    if (fromKnown && toKnown && !record.forced && !validator.canTransition(from, to)) {
      const allowed = table.states[from]?.next ?? [];
      this.#report(seq, line, {
        code: 'illegal_move',
        from,
        to,
        allowed,
        message: `illegal move ${from} → ${to} not marked forced; ${from} may only move to ${allowed.join(', ') || 'nothing'}`,
      });
    }
    this.#previous = record;
    this.#afterReset = false;
  }
}

function unknownState(validator: TransitionValidator<string>, field: 'from' | 'to', state: string): IssueDetails {
  return {
    code: 'unknown_state',
    state,
    field,
    message: `"${field}" is ${JSON.stringify(state)}, a state the table does not have (known: ${validator.states.join(', ')})`,
  };
}

/**
 * Replays records against a table and returns every problem, each with its seq and (for
 * entries read from a file) its line: illegal moves not marked forced, breaks in the chain
 * (`from` ≠ the previous `to`; after a reset line, ≠ the initial state), gaps and repeats in
 * `seq`, time going backwards, unknown states, negative durations. Items that begin with a
 * meta line are a whole file, written from the machine's creation, so its first record must
 * be seq 1 from the initial state: records lost at the start show as `seq_gap` and
 * `broken_chain`. Bare records may start anywhere (a bounded history drops its oldest). A
 * clean history gives `{ ok: true, issues: [] }`. Pure. Given an async iterable
 * (`readHistory(file)`), it checks the items as they are read, in constant memory, and resolves
 * with the same verdict.
 */
export function validateHistory(items: Iterable<HistoryItem>, table?: TransitionTable<string>): HistoryValidation;
export function validateHistory(
  items: AsyncIterable<HistoryItem>,
  table?: TransitionTable<string>,
): Promise<HistoryValidation>;
export function validateHistory(
  items: HistoryItems,
  table?: TransitionTable<string>,
): HistoryValidation | Promise<HistoryValidation> {
  return feedItems(items, () => new HistoryValidator(table));
}
