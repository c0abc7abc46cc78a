import type { Pricing, TransitionTable } from 'agent-state-machine';
import type { RunTaskOptions } from 'agent-state-machine/internal';
import type { StoreBatch } from 'agent-state-machine/batch';
import type { RedisBudget } from './RedisBudget';
import type { RunParking } from './parkRun';
import type { BatchMeta } from './runRecords';
import type { WorkerContext } from './WorkerContext';
import type { EarlierAttempt } from './WorkerStore';

/** Where one run of a worker keeps its records, and what it resumes from. */
export interface RunSinks {
  historyFile: string | undefined;
  inBatch: StoreBatch | undefined;
  resumeFrom: Extract<EarlierAttempt, { kind: 'interrupted' }>['resumeFrom'] | undefined;
}

/**
 * The options `runTask` is given for one run of a worker: the batch's per-run limits, its shared
 * budget in Redis, the worker's approval and journal, and where the run's records go.
 */
export function workerRunOptions(
  ctx: WorkerContext,
  run: { index: number; meta: BatchMeta; budget: RedisBudget; price: Pricing | undefined; signal: AbortSignal },
  parking: RunParking | undefined,
  sinks: RunSinks,
  runOptions: { runId: string; metadata: Record<string, unknown> },
): RunTaskOptions {
  const { drive, approve, approvalTimeoutMs, journal, resumeTools } = ctx.settings;
  const { index, meta, budget, price, signal } = run;
  const { historyFile, inBatch, resumeFrom } = sinks;
  return {
    name: `tasks[${index}]`,
    // The shared budget lives in Redis: every run reserves and charges it there.
    adapter: {
      budget: meta.perRun ?? {},
      // A framework run is given the producer's retries only to refuse them by name (the
      // framework retries its own calls); its cancel grace is the framework's own.
      ...(meta.retry === undefined ? {} : { retry: meta.retry }),
      ...(drive === undefined ? { cancelGraceMs: meta.cancelGraceMs } : {}),
      logger: false,
      externalBudgets: [budget],
      // A run that wraps up within a cap moves through WrappingUp, one that asks approval through AwaitingApproval.
      ...(drive === undefined ? { table: wrapsUp(meta) ? ctx.tables.wrapUp : ctx.tables.plain } : {}),
      ...(approve === undefined ? {} : { approve }),
      ...(approvalTimeoutMs === undefined ? {} : { approvalTimeoutMs }),
      ...(price === undefined ? {} : { pricing: price }),
      journal,
      ...(resumeFrom === undefined ? {} : { resumeFrom }),
      ...(resumeFrom === undefined || resumeTools === undefined ? {} : { resumeTools }),
    },
    signal,
    ...(parking === undefined
      ? {}
      : { awaitPause: parking.awaitPause, awaitFrameworkPause: parking.awaitFrameworkPause }),
    ...(historyFile === undefined ? {} : { historyFile, historyOptions: { ...runOptions, overwrite: true } }),
    ...(inBatch === undefined
      ? {}
      : { openSink: (table: TransitionTable<string>) => inBatch.openRun(runOptions.runId, runOptions, table) }),
  };
}

function wrapsUp(meta: BatchMeta): boolean {
  return meta.perRun?.wrapUp !== undefined || meta.total?.wrapUp !== undefined;
}
