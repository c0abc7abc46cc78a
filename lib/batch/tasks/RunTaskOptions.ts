import type { AgentWithStateMachine, AgentWithStateMachineOptions } from '../../agent/AgentWithStateMachine';
import type { TurnResult } from '../../agent/TurnResult';
import type { JsonlHistorySinkOptions } from '../../history/JsonlHistorySinkOptions';
import type { RunFileFacts } from '../../history/readRunFile';
import type { TransitionTable } from '../../machine/TransitionTable';
import type { RunSink } from '../keeping/RunStore';
import type { FrameworkTurn } from './FrameworkTurn';

/** Options of `runTask(task, options)`. */
export interface RunTaskOptions {
  /** How the task is named in errors, e.g. `tasks[3]`. Default `task`. */
  name?: string;
  /** Options of the run's `AgentWithStateMachine`: budgets (shared and external ones too), retries, pricing, logger, clock. */
  adapter?: AgentWithStateMachineOptions;
  /** Cancels the run: its turn, and a pending agent factory. */
  signal?: AbortSignal;
  /**
   * Aborts a pending agent factory, when that differs from `signal` (a batch's deadline stops
   * factories, while turns meet it through their budgets). Aborted with a `Deadline`, the run
   * ends as `budget_exceeded`. Default `signal`.
   */
  factorySignal?: AbortSignal;
  /** Writes the run's history, as it happens, to this JSON Lines file, opened with `historyOptions`. */
  historyFile?: string;
  historyOptions?: JsonlHistorySinkOptions;
  /**
   * Opens the run's sink in a store instead of a file (`runBatch({ store })`), with the
   * machine's table, once the run starts; a rejection ends the run as `error` before any call.
   */
  openSink?: (table: TransitionTable<string>) => Promise<RunSink>;
  /** Called with the run's adapter before its turn starts; may return a function called when the run has ended. A throw ends the run as `error`. */
  onRun?: (agent: AgentWithStateMachine) => (() => void) | void;
  /**
   * Called when the run's turn stops with `awaiting_approval` or `awaiting_budget`, to wait for
   * its next stop (how `runBatch` parks a run out of its slot). Default: `agent.continueTurn()`,
   * the calls answered (or `retryBudget()` called) through `onRun`'s adapter.
   */
  awaitPause?: (agent: AgentWithStateMachine, paused: TurnResult) => Promise<TurnResult>;
  /**
   * As `awaitPause`, for a framework task whose framework stopped for tool approvals (AI SDK
   * `needsApproval`): how `runBatch` and the BullMQ worker park it. Without it, such a run ends in Error, naming why:
   * nothing here could answer it.
   */
  awaitFrameworkPause?: (run: FrameworkTurn, paused: TurnResult) => Promise<TurnResult>;
  /**
   * Called once the run's history (its file `historyFile`, or its lines in a store) is closed
   * whole (no write failed), with what it says of the run, learned as it was written: what
   * `readRunFile` would read back. `file`: its history file; undefined in a store.
   */
  onRunFacts?: (facts: RunFileFacts, file: string | undefined) => void;
  /** Told what went wrong outside the run's outcome: an end function that threw, an incomplete history file. */
  onProblem?: (message: string) => void;
}
