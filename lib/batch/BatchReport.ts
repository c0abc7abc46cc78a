import { TURN_OUTCOMES } from '../internal/turnOutcomes';
import type { BudgetLimits } from '../agent/BudgetLimits';
import type { TurnOutcome } from '../agent/TurnOutcome';
import type { UsageTotals } from '../agent/UsageTotals';
import type { SkipReason } from './RunSkippedError';
import type { TaskRun } from './tasks/runTask';
import type { ApprovalWait, CapWait } from './approvals/ParkedRuns';
import type { CapRaise } from './raises/CapRaises';
import type { BatchTotal } from './BatchTotal';

/** How a run ended: a turn outcome, or `skipped` when it never started. */
export type RunOutcome = TurnOutcome | 'skipped';

/** The outcomes in the order reports list them. */
export const RUN_OUTCOMES: readonly RunOutcome[] = [...TURN_OUTCOMES, 'skipped'];

/**
 * What one run did, as `runTask` says it, with the task's id; a run that never started is
 * `skipped`, with zero usage and a `RunSkippedError`. Numbers and a path only, so a report of
 * 10,000 runs stays small.
 */
export interface RunReport extends Omit<TaskRun, 'outcome' | 'countsEarlier'> {
  id: string;
  outcome: RunOutcome;
  /**
   * With `resume`: `finished` — the run had ended before, its row is from its file;
   * `recovered` — it had been cut off, and went on from its journal (`resume.recordedCalls`
   * responses served without a request); `restarted` — it had been cut off and ran again from
   * the beginning (`resume.reason` says why, when the adapter was reached). Its usage counts both attempts.
   */
  resumed?: 'finished' | 'recovered' | 'restarted';
  /** The run parked for approval: how often, for how many calls, and how long it waited. */
  approval?: ApprovalWait;
  /** The run parked at the batch's pausing cap (`total.whenSpent: 'pause'`): how often, and how long it waited. */
  capWait?: CapWait;
  /** With `resume` and `salvage`: its file from before had damaged lines, read past (their numbers, the reader's words for each). */
  salvaged?: { file: string; skippedLines: number[]; warnings: string[] };
}

/** Usage summed over all runs, and how many runs ended each way. */
export interface BatchTotals extends UsageTotals {
  outcomes: Record<RunOutcome, number>;
}

/** What `runBatch` returns: one report per task in task order, the totals, and why the batch stopped early, if it did. */
export interface BatchReport {
  /** One per task, in task order. */
  runs: RunReport[];
  totals: BatchTotals;
  /** The limits the batch ran under (`total.maxCostUsd` as it started; `raises` has the rest). */
  limits: { perRun?: BudgetLimits; total?: BatchTotal };
  concurrency: number;
  /** With `total.whenSpent: 'pause'`: every raise of the cap, in order (empty when none came). */
  raises?: CapRaise[];
  /** From the call to the last run's end. */
  durationMs: number;
  /** Set when some tasks were never started: why. */
  stopped?: { reason: SkipReason; message: string };
  /** With `store`: the id the batch's runs are kept under (`agent-sm runs --store URL --batch <id>`). */
  batchId?: string;
}

/** Handed to `onProgress`. */
export interface BatchProgress {
  /** Runs ended, skipped ones included. */
  done: number;
  total: number;
  running: number;
  outcomes: Record<RunOutcome, number>;
  /** Usage charged to the shared budget so far; `wallMs` is the batch's elapsed time. */
  usage: UsageTotals;
  /** What just happened. */
  event:
    | { type: 'started'; index: number; id: string }
    /** A run waiting for approval let go of its slot, `calls` waiting for `onApproval`'s answers; `atCap`: it waits for a raise of the paused cap. */
    | { type: 'parked'; index: number; id: string; calls: number; atCap?: true }
    /** A parked run with its answers (or, `atCap`, after a raise) took a slot again and goes on. */
    | { type: 'unparked'; index: number; id: string; calls: number; atCap?: true }
    | { type: 'finished'; index: number; run: RunReport }
    | { type: 'skipped'; count: number; reason: SkipReason; message: string };
}
