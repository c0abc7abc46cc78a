// The scheduling is BatchScheduler's; one task is runTask's, the manifest batchManifest's,
// the options and the report are typed in BatchOptions and BatchReport.
import { safeLog, type AgentLogger } from '../agent/AgentLogger';
import { Budget } from '../agent/money/Budget';
import { addUsage, emptyUsage } from '../agent/UsageTotals';
import { getDefaultLogger } from '../machine/defaultLogger';
import { isFrameworkTask } from './tasks/checkBatchTasks';
import type { FrameworkTask } from './tasks/runFrameworkTask';
import type { EarlierRuns } from './resume/EarlierRuns';
import { openBatchKeeping } from './openBatchKeeping';
import { salvageMessage } from './resume/salvageMessage';
import { resolveBatchOptions } from './resolveBatchOptions';
import { BatchScheduler, type BatchLog } from './BatchScheduler';
import type { BatchOptions, BatchTask } from './BatchOptions';
import type { BatchReport } from './BatchReport';

/**
 * `runBatch`'s work, loaded at its first call (`runBatch.ts` says what it promises, and checks
 * the tasks and the options' names): the options' values checked, the batch's place
 * opened, its runs scheduled, the report made.
 */
export async function scheduleBatch(
  list: ReadonlyArray<BatchTask | FrameworkTask>,
  options: BatchOptions,
): Promise<BatchReport> {
  const {
    perRun,
    total,
    historyDir,
    store,
    batchId,
    historyDurability,
    historyGroupCommit,
    signal,
    onProgress,
    onRun,
    logger,
    resumeTools,
    approve,
    onApproval,
    onPause,
  } = options;
  const { adapterOptions, mirrorOptions, caps, whenSpent, defaulted } = resolveBatchOptions(options, list);
  const { concurrency, overwriteHistory, showProgress, clock, resume, salvage } = defaulted;
  const log = batchLog(logger);
  // Each run's file says which caps its batch ran under, so a report made from the folder alone can show them.
  const sinkModes = {
    ...(historyDurability === undefined ? {} : { durability: historyDurability }),
    ...(historyGroupCommit === undefined ? {} : { groupCommit: historyGroupCommit }),
  };
  const batchInfo = {
    limits: { ...(perRun === undefined ? {} : { perRun }), ...(total === undefined ? {} : { total }) },
    concurrency,
  };
  const ids = list.map((t) => t.id);
  // Where the runs' records are kept, opened (locked, checked) before any run.
  const keeping = await openBatchKeeping({
    historyDir,
    store,
    batchId,
    overwrite: overwriteHistory,
    resume,
    ids,
    manifest: { startedAt: clock(), ...batchInfo },
  });
  try {
    // What an interrupted run of this batch left, when resuming it.
    const resuming: EarlierRuns | undefined = resume ? await keeping.earlierRuns(ids, salvage) : undefined;
    const earlier = resuming?.states;
    for (const state of earlier ?? [])
      if (state.kind !== 'not_started' && state.salvaged) log?.warn(salvageMessage(state.salvaged));
    if (earlier === undefined) keeping.startNew(clock());

    const startedAt = clock();
    const scheduler = new BatchScheduler({
      list,
      resuming,
      earlier,
      pool: new Budget(caps, { label: "the batch's total budget", elapsedWall: { clock }, whenSpent }),
      pausing: whenSpent === 'pause',
      concurrency,
      clock,
      log,
      raiseBox: keeping.raiseBox,
      raiseBy: keeping.raiseBy,
      answerBox: keeping.answerBox,
      runOptions: (task) => (isFrameworkTask(task) ? mirrorOptions : adapterOptions),
      sinkFor: (index) =>
        keeping.sinkFor(index, {
          runId: list[index]!.id,
          metadata: { taskId: list[index]!.id, index, batch: batchInfo },
          startedAt: clock(),
          ...sinkModes,
        }),
      endedRuns: keeping.readEndedRuns(),
      showProgress,
      capsCost: total?.maxCostUsd !== undefined,
      options: { perRun, signal, onProgress, onRun, resumeTools, approve, onApproval, onPause },
    });
    await scheduler.run();
    return batchReport(scheduler, options, concurrency, Math.max(0, clock() - startedAt) || 0, keeping.batchId);
  } finally {
    await keeping.close(log?.error);
  }
}

/** The batch's log lines through its logger (none with `false`); a throwing logger never changes a batch's outcome. */
function batchLog(logger: BatchOptions['logger']): BatchLog | undefined {
  const chosen: AgentLogger | undefined = logger === false ? undefined : (logger ?? getDefaultLogger());
  if (chosen === undefined) return undefined;
  return {
    info: (m: string) => safeLog(chosen, 'info', m, {}),
    warn: (m: string) => safeLog(chosen, 'warn', m, {}),
    error: (m: string) => safeLog(chosen, 'error', m, {}),
  };
}

/** The report of a batch whose scheduler has run: its runs, their totals, the caps and raises, why it stopped. */
function batchReport(
  scheduler: BatchScheduler,
  { perRun, total }: BatchOptions,
  concurrency: number,
  durationMs: number,
  batchId: string | undefined,
): BatchReport {
  const { runs, outcomes, raises, stopped } = scheduler;

  let totals = emptyUsage();
  for (const run of runs) totals = addUsage(totals, run.usage);
  return {
    runs,
    totals: { ...totals, outcomes },
    limits: {
      ...(perRun === undefined ? {} : { perRun: { ...perRun } }),
      ...(total === undefined ? {} : { total: { ...total } }),
    },
    concurrency,
    ...(raises === undefined ? {} : { raises: raises.list }),
    durationMs,
    ...(batchId === undefined ? {} : { batchId }),
    ...(stopped === undefined || outcomes.skipped === 0
      ? {}
      : { stopped: { reason: stopped.reason, message: stopped.message } }),
  };
}
