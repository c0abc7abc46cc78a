import type { StateName } from '../../states/StateName';
import type { IllegalTransitionError } from './IllegalTransitionError';
import type { TransitionRecord } from './TransitionRecord';
import type { TransitionTable } from './TransitionTable';

/** Receives every record, in order, however small the in-memory history is. */
export interface HistorySink<S extends string = StateName> {
  write(record: TransitionRecord<S>): void;
  /** A move the table rejected (the machine did not change). */
  rejected?(error: IllegalTransitionError<S>): void;
  /** The machine was reset: the next record's `from` is the initial state. */
  reset?(info: ResetInfo<S>): void;
  /** Called once, when the machine is made, with the table it enforces (a file sink records it). */
  attach?(table: TransitionTable<S>): void;
  /**
   * A journal line to keep beside the moves: an adapter's record of an LLM attempt or a tool
   * call (`AgentWithStateMachine`'s `journal` option), handed over by `machine.journal()`.
   * A sink whose writes complete later (a database) returns the line's commit: for the money
   * ledger's `reserve` line the adapter awaits it before the call starts, and does not make
   * the call when it rejects. A file sink keeps the line before it returns, and returns nothing.
   */
  journal?(entry: JournalLine): void | PromiseLike<void>;
}

/** What a sink's `journal` receives: a JSON object marked by its `type` (`llm`, `tool`). */
export interface JournalLine {
  readonly type: string;
}

/** What `reset` reports: the state it left, when, and the last seq before it. */
export interface ResetInfo<S extends string = StateName> {
  readonly from: S;
  readonly at: number;
  readonly seq: number;
}
