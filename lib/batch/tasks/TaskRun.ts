import type { TurnOutcome } from '../../agent/TurnOutcome';
import type { ResumeInfo } from '../../agent/journal/RunRecording';
import type { UsageTotals } from '../../agent/UsageTotals';

/** How one task's run ended. Numbers and a path only. */
export interface TaskRun {
  outcome: TurnOutcome;
  /** The run's usage. */
  usage: UsageTotals;
  /** From start to end of the run, history file and agent factory included. */
  durationMs: number;
  /** Moves the run's machine made: the record lines of its history file. */
  transitions: number;
  /** The history file, when one was opened. */
  historyFile?: string;
  /** Why the run did not end normally: a `TurnError`, the factory's failure, a `HistoryFileError`. */
  error?: Error;
  /** Writing the history file failed part-way: the file is incomplete. */
  historyError?: Error;
  /**
   * With the adapter's `resumeFrom`: its `usage` counts what the cut-off attempt spent (its turn
   * started, and a turn's start counts it). False when it failed before (the agent factory, the
   * history file): the batch adds that spend, which was made all the same.
   */
  countsEarlier?: boolean;
  /** With the adapter's `resumeFrom`: how the run resumed (recovered from the journal, or restarted) and what it served. */
  resume?: ResumeInfo;
  /**
   * Why part of its money is uncertain (`usage.uncertainUsd`), most calls first, as its history
   * says (its file, or its lines in a store; resumed, with the attempts a resume set aside, each
   * call once): when it has one.
   */
  uncertain?: ReadonlyArray<{ readonly why: string; readonly calls: number }>;
  /** Why some of its LLM calls are of unknown cost (`usage.unpricedCalls`), most calls first, as `uncertain` is read. */
  unpriced?: ReadonlyArray<{ readonly why: string; readonly calls: number }>;
}
