// The scheduling is BatchScheduler's; one task is runTask's, the manifest batchManifest's,
// the options and the report are typed in BatchOptions and BatchReport.
import { safeLog, type AgentLogger } from '../agent/AgentLogger';
import { Budget } from '../agent/money/Budget';
import { addUsage, emptyUsage } from '../agent/UsageTotals';
import { getDefaultLogger } from '../machine/defaultLogger';
import { InvalidArgumentError } from '../machine/InvalidArgumentError';
import { isFrameworkTask, type FrameworkTask } from './runFrameworkTask';
import { BATCH_OPTION_KEYS } from './batchOptionKeys';
import { assertKnownOptions } from '../machine/assertKnownOptions';
import type { EarlierRuns } from './EarlierRuns';
import { openBatchKeeping } from './openBatchKeeping';
import { salvageMessage } from './salvageMessage';
import { resolveBatchOptions } from './resolveBatchOptions';
import { BatchScheduler, type BatchLog } from './BatchScheduler';
import type { BatchOptions, BatchTask } from './BatchOptions';
import type { BatchReport } from './BatchReport';

/**
 * `runBatch`'s work, loaded at its first call (`runBatch.ts` says what it promises): the tasks
 * and options checked, the batch's place opened, its runs scheduled, the report made.
 */
export async function scheduleBatch(
  tasks: Iterable<BatchTask | FrameworkTask>,
  options: BatchOptions = {},
): Promise<BatchReport> {
  if (typeof options !== 'object' || options === null) throw new InvalidArgumentError('options', 'an object', options);
  assertKnownOptions(options, BATCH_OPTION_KEYS, 'runBatch()');
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
  const list = materialize(tasks);
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

/** Tasks checked and copied once, so a generator is read once and ids are known to be unique before anything runs. */
function materialize(tasks: unknown): Array<BatchTask | FrameworkTask> {
  const iterable =
    typeof tasks === 'object' && tasks !== null && typeof (tasks as Iterable<unknown>)[Symbol.iterator] === 'function';
  if (!iterable) throw new InvalidArgumentError('tasks', 'an array or iterable of { id, input, agent }', tasks);
  const list = Array.from(tasks as Iterable<unknown>);
  const seen = new Map<string, number>();
  list.forEach((task, i) => {
    if (typeof task !== 'object' || task === null)
      throw new InvalidArgumentError(`tasks[${i}]`, 'an object { id, input, agent } or { id, input?, run }', task);
    const { id, input, agent } = task as Record<string, unknown>;
    if (typeof id !== 'string' || id === '') throw new InvalidArgumentError(`tasks[${i}].id`, 'a non-empty string', id);
    const first = seen.get(id);
    if (first !== undefined)
      throw new InvalidArgumentError(`tasks[${i}].id`, `unique (\`tasks[${first}].id\` is the same)`, id);
    seen.set(id, i);
    if (isFrameworkTask(task)) {
      if (input !== undefined && typeof input !== 'string')
        throw new InvalidArgumentError(`tasks[${i}].input`, 'a string (the user message) or undefined', input);
      return;
    }
    if (typeof input !== 'string')
      throw new InvalidArgumentError(`tasks[${i}].input`, 'a string (the user message)', input);
    if (!((typeof agent === 'object' && agent !== null) || typeof agent === 'function')) {
      throw new InvalidArgumentError(
        `tasks[${i}].agent`,
        'an AgentLoop or a function returning one (or give `run(mirror)` for a framework loop)',
        agent,
      );
    }
  });
  return list as Array<BatchTask | FrameworkTask>;
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
