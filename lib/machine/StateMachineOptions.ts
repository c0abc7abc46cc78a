import type { Logger } from 'winston';
import type { StateName } from '../../states/StateName';
import type { HistorySink, ResetInfo } from './HistorySink';
import type { IllegalTransitionError } from './IllegalTransitionError';
import type { TransitionRecord } from './TransitionRecord';
import type { TransitionTable } from './TransitionTable';

/** The machine's events, as an eventemitter3 event map. */
export interface StateMachineEvents<S extends string = StateName> {
  transition: [record: TransitionRecord<S>];
  rejected: [error: IllegalTransitionError<S>];
  reset: [info: ResetInfo<S>];
  /** A listener threw; the machine and the other listeners went on. */
  listenerError: [info: { event: string; error: unknown }];
  /** The sink threw while writing; the move itself took effect. */
  sinkError: [info: { record?: TransitionRecord<S>; error: unknown }];
}

/** Options of `new StateMachine(options)`: table, clock, logger, history bound and sink. */
export interface StateMachineOptions<S extends string = StateName> {
  /** How many records `history()` keeps: a positive integer, or `Infinity`. Default 100. */
  maxHistorySize?: number;
  /** Returns the time in epoch milliseconds. Default `Date.now`; tests pass their own. */
  clock?: () => number;
  /** A winston logger, or `false` for none. Default: a shared stderr logger at `AGENT_SM_LOG_LEVEL` or `warn`. */
  logger?: Logger | false;
  /** Receives every record (and rejected moves and resets, when it has those methods). */
  // NoInfer: the state type comes from `table` alone, so a sink typed for plain strings
  // cannot silently widen the machine to StateMachine<string> and let typos through.
  sink?: HistorySink<NoInfer<S>> | ((record: TransitionRecord<NoInfer<S>>) => void);
  /** A table other than the sixteen-state one, e.g. from `extendTable`. */
  table?: TransitionTable<S>;
}
