import type { BatchProgress, BatchReport, CapRaise, RunReport, UsageTotals } from 'agent-state-machine';

/** A run of a distributed batch: `RunReport` plus where it ran. */
export interface DistributedRunReport extends RunReport {
  /** The worker that ran it (or lost it, or skipped it); absent when the producer skipped it. */
  worker?: string;
  /** How many times it was started (more than 1 only with `retryLostRuns`). */
  attempt?: number;
}

/** What a distributed batch's `report()` resolves to: `BatchReport` with each run's worker, plus the shared budget as Redis counted it. */
export interface DistributedBatchReport extends BatchReport {
  runs: DistributedRunReport[];
  /** The batch's id: its keys in Redis and the folder of its history files. */
  batchId: string;
  /** Usage charged to the shared budget in Redis (lost runs' spend included); `wallMs` is the batch's elapsed time. */
  budget: UsageTotals;
  /** Each worker that ran a run, with its concurrency and how many runs it reported. */
  workers: Record<string, { concurrency: number; runs: number }>;
}

/** A submitted batch. */
export interface BatchHandle {
  readonly batchId: string;
  /**
   * Resolves once every task is reported, exactly once each. Rejects when Redis has not
   * answered for `timeoutMs`, or when `signal` aborts (the batch goes on; only this wait ends).
   */
  report(options?: { signal?: AbortSignal }): Promise<DistributedBatchReport>;
  /** Cancels the runs in flight on every worker and skips those not started. Resolves once the workers have been told. */
  abort(reason?: unknown): Promise<void>;
  /** Where the batch is now. */
  progress(): BatchProgress;
  /**
   * Raises the dollar cap of a batch submitted with `total: { maxCostUsd, whenSpent: 'pause' }`
   * to `maxCostUsd`, in Redis, atomically: the runs parked at the cap on every worker try their
   * call again, and the tasks that waited start. Rejects a cap not above the one in force
   * (naming it, and what is spent and held under it), and a batch that stops at its cap.
   * The raise is in every handle's report (`raises`).
   */
  raise(limits: { maxCostUsd: number }): Promise<CapRaise>;
}
