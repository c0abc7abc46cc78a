// The scheduling is the worker loop below; one task is runTask's, the manifest batchManifest's,
// the options and the report are typed in BatchOptions and BatchReport.
import { setMaxListeners } from 'node:events';
import * as path from 'node:path';
import { safeLog, type AgentLogger } from '../agent/AgentLogger';
import { type AgentWithStateMachine } from '../agent/AgentWithStateMachine';
import { Budget } from '../agent/Budget';
import { Deadline } from '../agent/Deadline';
import { UsageMeter } from '../agent/UsageMeter';
import { addUsage, emptyUsage } from '../agent/UsageTotals';
import { messageOf } from '../internal/messageOf';
import { getDefaultLogger } from '../machine/defaultLogger';
import { InvalidArgumentError } from '../machine/InvalidArgumentError';
import { RunSkippedError, type SkipReason } from './RunSkippedError';
import { abortMessage, runTask } from './runTask';
import { isFrameworkTask, type FrameworkTask } from './runFrameworkTask';
import { BATCH_OPTION_KEYS } from './batchOptionKeys';
import { assertKnownOptions } from '../machine/assertKnownOptions';
import type { FolderLock } from './lockFolder';
import { openBatchFolder } from './openBatchFolder';
import { taskState } from './resumeState';
import { folderEarlierRuns, storeEarlierRuns, type EarlierRuns } from './EarlierRuns';
import { responses } from './readResumeJournal';
import { EndedRunCache } from './EndedRunCache';
import { finishedRunReport } from './finishedRunReport';
import { openStoreBatch, type OpenStoreBatch } from './openStoreBatch';
import { salvageMessage } from './salvageMessage';
import type { ResumeFrom } from '../agent/RunRecording';
import { uniqueFileNames } from './safeFileName';
import { writeBatchManifest } from './batchManifest';
import { assertNoClash } from './assertNoClash';
import { openProgressBar, type ProgressBar } from './progressBar';
import { resolveBatchOptions } from './resolveBatchOptions';
import { ParkedRuns, type Slot } from './ParkedRuns';
import { CapRaises } from './CapRaises';
import type { BatchOptions, BatchTask } from './BatchOptions';
import type { BatchProgress, BatchReport, RunOutcome, RunReport } from './BatchReport';

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
  const pausing = whenSpent === 'pause';
  const chosen: AgentLogger | undefined = logger === false ? undefined : (logger ?? getDefaultLogger());
  // A throwing logger never changes a batch's outcome.
  const log =
    chosen === undefined
      ? undefined
      : {
          info: (m: string) => safeLog(chosen, 'info', m, {}),
          warn: (m: string) => safeLog(chosen, 'warn', m, {}),
          error: (m: string) => safeLog(chosen, 'error', m, {}),
        };
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
      // Before any run: a folder read after a crash then knows the tasks that never wrote a file.
      writeBatchManifest(historyDir, {
        startedAt: clock(),
        concurrency,
        limits: batchInfo.limits,
        tasks: list.map((t, i) => ({ id: t.id, file: `${fileNames[i]!}.jsonl` })),
      });
    }

    // What each run's file says once it ended, for the next resume of this folder to read at once.
    const endedRuns = historyDir === undefined ? undefined : EndedRunCache.read(historyDir);
    const noting: Promise<unknown>[] = [];
    const startedAt = clock();
    const pool = new Budget(caps, { label: "the batch's total budget", elapsedWall: { clock }, whenSpent });
    const runs: RunReport[] = new Array<RunReport>(list.length);
    const outcomes = countOutcomes();
    let next = 0;
    let running = 0;
    let done = 0;
    for (const [index, state] of (earlier ?? []).entries()) {
      // Spent before, by ended and cut-off runs alike: the shared budget starts from it.
      if (state.kind !== 'not_started') pool.charge(state.usage);
      if (state.kind === 'finished') {
        runs[index] = finishedRunReport(list[index]!.id, state);
        outcomes[state.outcome] += 1;
        done += 1;
      }
    }
    /** Moves `next` past the tasks a resumed batch does not run again. */
    const skipFinished = (): void => {
      while (next < list.length && runs[next] !== undefined) next += 1;
    };
    // One controller for every run (not one per run: an AbortController costs microseconds to
    // make on Node 20), aborted once when the caller's signal aborts. Every run in flight
    // listens to it, so the listener cap is lifted — on this internal signal only.
    const cancelRuns = new AbortController();
    setMaxListeners(0, cancelRuns.signal);
    // Agent factories still pending are also aborted when total.maxWallMs passes (a turn has its
    // own deadline, a factory does not): one more shared controller, for them alone.
    const cancelFactories = new AbortController();
    setMaxListeners(0, cancelFactories.signal);
    if (signal?.aborted) {
      cancelRuns.abort(signal.reason);
      cancelFactories.abort(signal.reason);
    }
    let stopped: { reason: SkipReason; message: string; spent?: ReturnType<Budget['spent']> } | undefined;

    // The progress line, drawn from the events onProgress gets; opened just before the runs start.
    let bar: ProgressBar | undefined;
    const progress = (event: BatchProgress['event']): void => {
      if (onProgress === undefined && bar === undefined) return;
      const now: BatchProgress = {
        done,
        total: list.length,
        running,
        outcomes: { ...outcomes },
        usage: pool.usage,
        event,
      };
      bar?.update(now);
      if (onProgress === undefined) return;
      try {
        const returned: unknown = onProgress(now);
        // An async callback's rejection would otherwise surface as an unhandled rejection.
        if (returned instanceof Promise)
          returned.catch((error: unknown) => log?.error(`onProgress failed: ${messageOf(error)}`));
      } catch (error) {
        log?.error(`onProgress threw: ${messageOf(error)}; the batch goes on`);
      }
    };

    /** Why no further run may start, once that is so; the reason sticks. */
    const stopReason = (): typeof stopped => {
      if (stopped !== undefined) return stopped;
      if (signal?.aborted) stopped = { reason: 'aborted', message: abortMessage(signal.reason) };
      else {
        const spent = pool.spent();
        if (spent !== undefined) stopped = { reason: 'budget_exceeded', message: spent.message, spent };
      }
      return stopped;
    };

    const skipRest = (): void => {
      const why = stopReason();
      skipFinished();
      if (why === undefined || next >= list.length) return;
      let count = 0;
      for (; next < list.length; next++) {
        if (runs[next] !== undefined) continue;
        count += 1;
        const before = earlier?.[next];
        runs[next] = {
          id: list[next]!.id,
          outcome: 'skipped',
          // A resumed run cut off before keeps what that attempt spent, so the totals count it.
          usage: before?.kind === 'interrupted' ? before.usage : emptyUsage(),
          durationMs: 0,
          transitions: 0,
          error: new RunSkippedError(why.reason, why.message, why.spent),
          ...(before?.kind === 'interrupted' && before.salvaged !== undefined ? { salvaged: before.salvaged } : {}),
        };
      }
      outcomes.skipped += count;
      done += count;
      log?.info(`${why.message}: skipping ${count} run${count === 1 ? '' : 's'} not yet started`);
      progress({ type: 'skipped', count, reason: why.reason, message: why.message });
    };

    // Runs waiting for approval or a raise, out of their slots; `running` counts the runs in a slot.
    const parked = new ParkedRuns({
      canPark: approve !== undefined || pausing,
      clock,
      ...(onApproval === undefined ? {} : { onApproval }),
      onProblem: (message) => log?.error(message),
      onChange: ({ type, index, calls, atCap }) => {
        running += type === 'parked' ? -1 : 1;
        progress({ type, index, id: list[index]!.id, calls, ...(atCap ? { atCap } : {}) });
        if (type === 'parked' && atCap) raises?.paused();
      },
      raises: () => pool.raises,
      // Paused at the cap: tasks not started wait for a raise (or the abort that skips them).
      holding: () => pool.paused && next < list.length && stopReason() === undefined,
    });
    // A pausing cap's raises: onPause's and the folder's.
    const raises = pausing
      ? new CapRaises({
          pool,
          clock,
          folder: historyDir,
          onPause,
          onRaise: () => parked.raised(),
          log,
        })
      : undefined;

    const runOne = async (index: number, slot: Slot, resumeFrom?: ResumeFrom): Promise<RunReport> => {
      const task = list[index]!;
      const canAbort = signal !== undefined || pool.limits.maxWallMs !== undefined;
      const run = await runTask(task, {
        name: `tasks[${index}]`,
        // Object.assign, not a spread then more keys: see runTask.
        adapter: Object.assign(
          {},
          isFrameworkTask(task) ? mirrorOptions : adapterOptions,
          resumeFrom === undefined
            ? { budget: perRun ?? {}, sharedBudgets: [pool] }
            : { budget: perRun ?? {}, sharedBudgets: [pool], resumeFrom },
        ),
        // Without a batch signal nothing can cancel a run, and the adapter need not listen.
        // Runs parked at a pausing cap hear it too: the batch's deadline ends them there.
        ...(signal === undefined && !pausing ? {} : { signal: cancelRuns.signal }),
        ...(canAbort ? { factorySignal: cancelFactories.signal } : {}),
        ...(historyDir === undefined
          ? {}
          : {
              historyFile: path.join(historyDir, `${fileNames[index]!}.jsonl`),
              historyOptions: {
                runId: task.id,
                metadata: { taskId: task.id, index, batch: batchInfo },
                overwrite: overwriteHistory,
                startedAt: clock(),
                ...sinkModes,
              },
            }),
        ...(inStore === undefined
          ? {}
          : {
              openSink: inStore.sinkFor(task.id, {
                runId: task.id,
                metadata: { taskId: task.id, index, batch: batchInfo },
                startedAt: clock(),
                ...sinkModes,
              }),
            }),
        ...(onRun === undefined
          ? {}
          : { onRun: (agent: AgentWithStateMachine) => onRun({ id: task.id, index, agent }) }),
        ...(log === undefined ? {} : { onProblem: log.error }),
        awaitPause: (agent, paused) => parked.park(task.id, index, agent, slot, paused),
      });
      const wait = parked.takeWait(index);
      const capWait = parked.takeCapWait(index);
      return {
        id: task.id,
        ...run,
        ...(wait === undefined ? {} : { approval: { ...wait } }),
        ...(capWait === undefined ? {} : { capWait: { ...capWait } }),
      };
    };

    /** One run from its start to its end; it holds `slot` except while parked. */
    const runWhole = async (index: number, slot: Slot): Promise<void> => {
      running += 1;
      progress({ type: 'started', index, id: list[index]!.id });
      const before = earlier?.[index];
      let resumeFrom: ResumeFrom | undefined;
      if (before?.kind === 'interrupted') {
        // Its journal, read before the attempt is set aside: what the run continues from.
        const journal = await resuming!.journal(index);
        // A kill between a response's journal line and its record leaves the call uncounted there:
        // the run is served it, so it counts (toward `perRun.maxLlmCalls` too).
        const llmCalls = Math.max(before.usage.llmCalls, responses(journal));
        resumeFrom = { journal, usage: { ...before.usage, llmCalls } };
        if (resumeTools !== undefined) resumeFrom.tools = resumeTools;
        // Kept, not overwritten, once the run goes on: what the cut-off attempt did and spent stays readable.
        await resuming!.setAside(index);
      }
      let run = await runOne(index, slot, resumeFrom);
      if (before?.kind === 'interrupted') {
        // The adapter counted the earlier spend in the run's usage; a run that failed before its adapter existed did not.
        const usage = run.resume === undefined ? addUsage(before.usage, run.usage) : run.usage;
        run = {
          ...run,
          usage,
          resumed: run.resume?.mode ?? 'restarted',
          ...(before.salvaged === undefined ? {} : { salvaged: before.salvaged }),
        };
      }
      // Read beside the runs still going, not in the run's slot: the batch's pace stays the runs' own.
      if (endedRuns !== undefined && run.historyFile !== undefined)
        noting.push(taskState(run.historyFile, false, endedRuns).catch(() => undefined)); // unreadable: the next resume says why
      // A run that ended while parked (its approval timeout, an abort) held no slot.
      if (slot.held) running -= 1;
      done += 1;
      outcomes[run.outcome] += 1;
      runs[index] = run;
      progress({ type: 'finished', index, run });
    };

    /** The next task to start, if one may: none once all are taken, or the batch stopped (the rest skipped). */
    const take = (): number | undefined => {
      skipFinished();
      if (next >= list.length) return undefined;
      if (stopReason() !== undefined) return void skipRest();
      // Paused at the cap: the next task starts after a raise.
      if (pool.paused) return undefined;
      return next++;
    };

    // One listener on the caller's signal, however many runs: it cancels those in flight and
    // skips what is left at once, so progress shows it before the runs in flight end.
    const onAbort = (): void => {
      cancelRuns.abort(signal?.reason);
      if (!cancelFactories.signal.aborted) cancelFactories.abort(signal?.reason);
      skipRest();
      parked.wake();
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    // total.maxWallMs is a deadline for the batch: when it passes, factories still pending are
    // aborted (with the grace) so that a hanging one cannot keep the batch from ending.
    const deadline = new UsageMeter({
      budgets: [pool],
      clock,
      onDeadline: (spent) => {
        cancelFactories.abort(new Deadline(spent));
        if (!pausing) return;
        // Paused, nothing else would end the runs parked at the cap nor the wait of the tasks not started.
        cancelRuns.abort(new Deadline(spent));
        skipRest();
        parked.wake();
      },
    });
    if (showProgress)
      bar = openProgressBar({
        total: list.length,
        done,
        ...(total?.maxCostUsd === undefined ? {} : { capUsd: () => pool.limits.maxCostUsd! }),
        spentUsd: () => pool.usage.costUsd,
        ...(log === undefined ? {} : { onProblem: log.error }),
      });
    deadline.start();
    raises?.start();
    try {
      await parked.runSlots(Math.min(concurrency, list.length), take, runWhole);
    } finally {
      raises?.stop();
      bar?.stop();
      deadline.stop();
      signal?.removeEventListener('abort', onAbort);
    }
    await Promise.all(noting);

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
      durationMs: Math.max(0, clock() - startedAt) || 0,
      ...(inStore === undefined ? {} : { batchId: inStore.batch.batchId }),
      ...(stopped === undefined || outcomes.skipped === 0
        ? {}
        : { stopped: { reason: stopped.reason, message: stopped.message } }),
    };
  } finally {
    lock?.release();
    // The lock is freed whatever the batch did; a failure to free it is told, never thrown over the report.
    await inStore?.batch
      .close()
      .catch((error: unknown) => log?.error(`cannot free the batch lock in ${store!.name}: ${messageOf(error)}`));
  }
}

function countOutcomes(): Record<RunOutcome, number> {
  return { end_of_turn: 0, wrapped_up: 0, budget_exceeded: 0, stalled: 0, error: 0, cancelled: 0, skipped: 0 };
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
