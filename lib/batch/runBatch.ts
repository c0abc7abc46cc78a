// The scheduling is BatchScheduler's; one task is runTask's, the manifest batchManifest's,
// the options and the report are typed in BatchOptions and BatchReport.
import * as path from 'node:path';
import { safeLog, type AgentLogger } from '../agent/AgentLogger';
import { Budget } from '../agent/money/Budget';
import { addUsage, emptyUsage } from '../agent/UsageTotals';
import { messageOf } from '../internal/messageOf';
import { getDefaultLogger } from '../machine/defaultLogger';
import { InvalidArgumentError } from '../machine/InvalidArgumentError';
import { isFrameworkTask, type FrameworkTask } from './runFrameworkTask';
import { BATCH_OPTION_KEYS } from './batchOptionKeys';
import { assertKnownOptions } from '../machine/assertKnownOptions';
import type { FolderLock } from './lockFolder';
import { openBatchFolder } from './openBatchFolder';
import { folderEarlierRuns, storeEarlierRuns, type EarlierRuns } from './EarlierRuns';
import { EndedRunCache } from './EndedRunCache';
import { openStoreBatch, type OpenStoreBatch } from './openStoreBatch';
import { salvageMessage } from './salvageMessage';
import { uniqueFileNames } from './safeFileName';
import { writeBatchManifest } from './batchManifest';
import { assertNoClash } from './assertNoClash';
import { resolveBatchOptions } from './resolveBatchOptions';
import { BatchScheduler, type BatchLog } from './BatchScheduler';
import type { BatchOptions, BatchTask } from './BatchOptions';
import type { BatchReport } from './BatchReport';
import { folderAnswerBox, keepsAnswers, storeAnswerBox } from './AnswerBox';
import { folderRaiseBox, keepsRaises, storeRaiseBox } from './raises/RaiseBox';
import { setAsideRaises } from './raises/raiseRequests';

// runBatch's types, where its callers have found them.
export type { BatchOptions, BatchTask } from './BatchOptions';
export {
  RUN_OUTCOMES,
  type BatchProgress,
  type BatchReport,
  type BatchTotals,
  type RunOutcome,
  type RunReport,
} from './BatchReport';

/**
 * Runs many agent tasks, each as one turn through its own `AgentWithStateMachine`, at most
 * `concurrency` at once, under per-run limits and a budget shared by the whole batch. Resolves
 * with a report of every run in task order; it rejects only for bad arguments, before any run
 * starts.
 *
 * - Shared budget: every run charges the pool as usage happens, and checks it before each LLM
 *   call, each tool call and at CheckingBudget. Once a limit is reached, runs in flight end as
 *   `budget_exceeded` at their next check and runs not yet started are `skipped`. A dollar cap
 *   is strict unless `strict: false`: each call's worst case is held before it starts, so spend
 *   never passes it (a plain cap can be passed by at most one response per run in flight);
 *   call and tool counts never pass theirs.
 * - A run that throws anywhere (agent factory, adapter, history file) ends as `error` with the
 *   cause; the batch goes on.
 * - `signal`: runs in flight are cancelled (abandoned after `cancelGraceMs` if they ignore it,
 *   agent factories still pending included), the rest are skipped, and the report comes back.
 * - Memory: a run keeps only the adapter's bounded history while it runs and numbers after;
 *   `historyDir` gets the full history of each run, line by line, as it happens.
 */
export async function runBatch(
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
  const fileNames = historyDir === undefined ? [] : uniqueFileNames(list.map((t) => t.id));
  // Each run's file says which caps its batch ran under, so a report made from the folder alone can show them.
  const sinkModes = {
    ...(historyDurability === undefined ? {} : { durability: historyDurability }),
    ...(historyGroupCommit === undefined ? {} : { groupCommit: historyGroupCommit }),
  };
  const batchInfo = {
    limits: { ...(perRun === undefined ? {} : { perRun }), ...(total === undefined ? {} : { total }) },
    concurrency,
  };
  const lock: FolderLock | undefined = historyDir === undefined ? undefined : openBatchFolder(historyDir);
  // A store's batch is opened (locked, checked, its manifest kept) before any run, like a folder.
  let inStore: OpenStoreBatch | undefined;
  try {
    if (store !== undefined)
      inStore = await openStoreBatch(store, batchId, overwriteHistory, resume, {
        startedAt: clock(),
        concurrency,
        limits: batchInfo.limits,
        tasks: list.map((t) => ({ id: t.id, file: t.id })),
      });
    if (historyDir !== undefined && !overwriteHistory && !resume)
      assertNoClash(
        historyDir,
        fileNames.map((name) => `${name}.jsonl`),
      );
    // What an interrupted run of this batch left in the folder or the store, when resuming it.
    const ids = list.map((t) => t.id);
    const resuming: EarlierRuns | undefined = !resume
      ? undefined
      : inStore !== undefined
        ? await storeEarlierRuns(inStore.batch, store!.name, ids, salvage)
        : await folderEarlierRuns(historyDir!, ids, salvage);
    const earlier = resuming?.states;
    for (const state of earlier ?? [])
      if (state.kind !== 'not_started' && state.salvaged) log?.warn(salvageMessage(state.salvaged));
    if (historyDir !== undefined && earlier === undefined) {
      EndedRunCache.clear(historyDir);
      // The raises asked of the batch before this one are not this one's.
      setAsideRaises(historyDir);
      // Before any run: a folder read after a crash then knows the tasks that never wrote a file.
      writeBatchManifest(historyDir, {
        startedAt: clock(),
        concurrency,
        limits: batchInfo.limits,
        tasks: list.map((t, i) => ({ id: t.id, file: `${fileNames[i]!}.jsonl` })),
      });
    }

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
      raiseBox:
        historyDir !== undefined
          ? folderRaiseBox(historyDir)
          : inStore !== undefined && keepsRaises(store!)
            ? storeRaiseBox(store!, inStore.batch.batchId)
            : undefined,
      raiseBy: historyDir !== undefined ? 'folder' : 'store',
      answerBox:
        historyDir !== undefined
          ? folderAnswerBox(historyDir)
          : inStore !== undefined && keepsAnswers(store!)
            ? storeAnswerBox(store!, inStore.batch.batchId)
            : undefined,
      runOptions: (task) => (isFrameworkTask(task) ? mirrorOptions : adapterOptions),
      sinkFor: (index) => {
        const task = list[index]!;
        const historyOptions = {
          runId: task.id,
          metadata: { taskId: task.id, index, batch: batchInfo },
          startedAt: clock(),
          ...sinkModes,
        };
        if (historyDir !== undefined)
          return {
            historyFile: path.join(historyDir, `${fileNames[index]!}.jsonl`),
            historyOptions: { ...historyOptions, overwrite: overwriteHistory },
          };
        return inStore === undefined ? {} : { openSink: inStore.sinkFor(task.id, historyOptions) };
      },
      // What each run's file says once it ended, for the next resume of this folder to read at once.
      endedRuns: historyDir === undefined ? undefined : EndedRunCache.read(historyDir),
      showProgress,
      capsCost: total?.maxCostUsd !== undefined,
      options: { perRun, signal, onProgress, onRun, resumeTools, approve, onApproval, onPause },
    });
    await scheduler.run();
    return batchReport(scheduler, options, concurrency, Math.max(0, clock() - startedAt) || 0, inStore?.batch.batchId);
  } finally {
    lock?.release();
    // The lock is freed whatever the batch did; a failure to free it is told, never thrown over the report.
    await inStore?.batch
      .close()
      .catch((error: unknown) => log?.error(`cannot free the batch lock in ${store!.name}: ${messageOf(error)}`));
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
