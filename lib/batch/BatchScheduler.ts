import { setMaxListeners } from 'node:events';
import * as fs from 'node:fs';
import type { AgentWithStateMachine } from '../agent/AgentWithStateMachine';
import type { AgentWithStateMachineOptions } from '../agent/adapter/AgentWithStateMachineOptions';
import type { Budget } from '../agent/money/Budget';
import { Deadline } from '../agent/money/Deadline';
import type { ResumeFrom } from '../agent/journal/RunRecording';
import { UsageMeter } from '../agent/money/UsageMeter';
import { addUsage } from '../agent/UsageTotals';
import { messageOf } from '../internal/messageOf';
import type { BatchOptions, BatchTask } from './BatchOptions';
import type { BatchProgress, RunOutcome, RunReport } from './BatchReport';
import { CapRaises } from './raises/CapRaises';
import type { EarlierRuns } from './resume/EarlierRuns';
import { resumedUsage } from './keeping/readResumeJournal';
import type { EndedRunCache } from './resume/EndedRunCache';
import type { RunFileFacts } from '../history/readRunFile';
import { reasonsOverAttempts, type AttemptSpend } from '../history/spendOverAttempts';
import { finishedRunReport } from './finishedRunReport';
import { PersonAnswers } from './approvals/PersonAnswers';
import type { AnswerBox } from './approvals/AnswerBox';
import type { RaiseBox } from './raises/RaiseBox';
import { ParkedRuns, type Slot } from './approvals/ParkedRuns';
import { openProgressBar, type ProgressBar } from './progressBar';
import { noteEnded, stateOfFacts, taskState, type TaskState } from './resume/resumeState';
import { isFrameworkTask } from './tasks/checkBatchTasks';
import type { FrameworkTask } from './tasks/runFrameworkTask';
import { skippedRun } from './skippedRun';
import { RunSkippedError, type SkipReason } from './RunSkippedError';
import { abortMessage, runTask } from './tasks/runTask';
import type { TaskRun } from './tasks/TaskRun';
import type { RunTaskOptions } from './tasks/RunTaskOptions';

/** The batch's logger, each level never throwing. */
export type BatchLog = { info: (m: string) => void; warn: (m: string) => void; error: (m: string) => void };

/** Why no further run may start, once that is so. */
interface Stop {
  reason: SkipReason;
  message: string;
  spent?: ReturnType<Budget['spent']>;
}

/** What the scheduler is given: the tasks, what an earlier attempt left of them, the pool and where runs write. */
export interface BatchSchedulerSetup {
  list: ReadonlyArray<BatchTask | FrameworkTask>;
  /** What an interrupted run of this batch left, when resuming it (`earlier` its tasks' states). */
  resuming: EarlierRuns | undefined;
  earlier: readonly TaskState[] | undefined;
  pool: Budget;
  pausing: boolean;
  concurrency: number;
  clock: () => number;
  log: BatchLog | undefined;
  /** Where a pausing batch reads the raises asked of it and notes its pause: its folder's files, or its store. */
  raiseBox: RaiseBox | undefined;
  /** How a raise read from `raiseBox` is listed in the report. */
  raiseBy: 'folder' | 'store';
  /** Where a batch with an approval policy takes the answers people give from the terminal: its folder's, or its store's. */
  answerBox: AnswerBox | undefined;
  /** Each run's adapter (or mirror) options, before the budgets and the journal to resume from. */
  runOptions: (task: BatchTask | FrameworkTask) => AgentWithStateMachineOptions;
  /** Where run `index` writes its history: a file, a store's sink, or nowhere. */
  sinkFor: (index: number) => Pick<RunTaskOptions, 'historyFile' | 'historyOptions' | 'openSink'>;
  /** The ended runs' cache of a folder, for the next resume to read at once. */
  endedRuns: EndedRunCache | undefined;
  showProgress: boolean;
  /** The dollar cap the progress line shows, when the batch has one. */
  capsCost: boolean;
  options: Pick<
    BatchOptions,
    'perRun' | 'signal' | 'onProgress' | 'onRun' | 'resumeTools' | 'approve' | 'onApproval' | 'onPause'
  >;
}

/**
 * The runs of one `runBatch`, scheduled: which task starts next, at most `concurrency` in their
 * slots, parked runs (approval, a paused cap) out of theirs, the rest skipped once the batch
 * stops (its signal, a spent total), and the progress told as it goes. State in one object
 * rather than closures over shared counters; `runBatch` opens the folder or store and makes the
 * report from `runs`, `outcomes` and `stopped`.
 */
export class BatchScheduler {
  /** Each task's report, in task order, once it has one. */
  readonly runs: RunReport[];
  readonly outcomes: Record<RunOutcome, number> = countOutcomes();
  /** The raises of a pausing cap: `onPause`'s and the folder's. */
  readonly raises: CapRaises | undefined;

  readonly #s: BatchSchedulerSetup;
  readonly #parked: ParkedRuns;
  /** The answers people give from the terminal, for a folder or store batch with an approval policy. */
  readonly #answers: PersonAnswers | undefined;
  /** Cancels every run in flight: one controller for all. */
  readonly #cancelRuns = new AbortController();
  /** Cancels agent factories still pending: the caller's signal, or total.maxWallMs passed. */
  readonly #cancelFactories = new AbortController();
  /** The histories of ended runs being noted in the folder's cache. */
  readonly #noting: Promise<unknown>[] = [];
  #next = 0;
  /** Runs in a slot (parked ones are not). */
  #running = 0;
  #done = 0;
  #stopped: Stop | undefined;
  #bar: ProgressBar | undefined;

  constructor(setup: BatchSchedulerSetup) {
    this.#s = setup;
    const { list, earlier, pool, pausing, clock, log, options } = setup;
    this.runs = new Array<RunReport>(list.length);
    for (const [index, state] of (earlier ?? []).entries()) {
      // Spent before, by ended and cut-off runs alike: the shared budget starts from it.
      if (state.kind !== 'not_started') pool.charge(state.usage);
      if (state.kind === 'finished') {
        this.runs[index] = finishedRunReport(list[index]!.id, state);
        this.outcomes[state.outcome] += 1;
        this.#done += 1;
      }
    }
    // Every run in flight listens to these: the listener cap is lifted on these internal signals only.
    setMaxListeners(0, this.#cancelRuns.signal);
    setMaxListeners(0, this.#cancelFactories.signal);
    if (options.signal?.aborted) {
      this.#cancelRuns.abort(options.signal.reason);
      this.#cancelFactories.abort(options.signal.reason);
    }
    // A framework task's own approvals (AI SDK `needsApproval`) park it as `approve` parks an agent task.
    const approvals = options.approve !== undefined || list.some(isFrameworkTask);
    const answers = setup.answerBox !== undefined && approvals ? new PersonAnswers(setup.answerBox, log) : undefined;
    this.#answers = answers;
    const { onApproval } = options;
    this.#parked = new ParkedRuns({
      canPark: approvals || pausing,
      clock,
      ...(answers === undefined
        ? onApproval === undefined
          ? {}
          : { onApproval }
        : {
            // The caller's callback first, then the answers from the terminal, already there or to come.
            onApproval: (request) => {
              try {
                return onApproval?.(request);
              } finally {
                answers.asked(request);
              }
            },
          }),
      onProblem: (message) => log?.error(message),
      onTaken: (index) => answers?.taken(list[index]!.id),
      onChange: ({ type, index, calls, atCap }) => {
        if (type === 'unparked' && !atCap) answers?.left(list[index]!.id);
        this.#running += type === 'parked' ? -1 : 1;
        this.#progress({ type, index, id: list[index]!.id, calls, ...(atCap ? { atCap } : {}) });
        if (type === 'parked' && atCap) this.raises?.paused();
      },
      raises: () => pool.raises,
      // Paused at the cap: tasks not started wait for a raise (or the abort that skips them).
      holding: () => pool.paused && this.#next < list.length && this.#stopReason() === undefined,
    });
    this.raises = pausing
      ? new CapRaises({
          pool,
          clock,
          box: setup.raiseBox,
          by: setup.raiseBy,
          onPause: options.onPause,
          onRaise: () => this.#parked.raised(),
          log,
        })
      : undefined;
  }

  /** Why the batch stopped starting runs, when it did (and skipped some). */
  get stopped(): Stop | undefined {
    return this.#stopped;
  }

  /** Runs every task not yet ended, `concurrency` at once, to the batch's end. */
  async run(): Promise<void> {
    const { list, pool, pausing, clock, log, options, concurrency } = this.#s;
    const { signal } = options;
    // One listener on the caller's signal, however many runs: it cancels those in flight and
    // skips what is left at once, so progress shows it before the runs in flight end.
    const onAbort = (): void => {
      this.#cancelRuns.abort(signal?.reason);
      if (!this.#cancelFactories.signal.aborted) this.#cancelFactories.abort(signal?.reason);
      this.#skipRest();
      this.#parked.wake();
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    // total.maxWallMs is a deadline for the batch: when it passes, factories still pending are
    // aborted (with the grace) so that a hanging one cannot keep the batch from ending.
    const deadline = new UsageMeter({
      budgets: [pool],
      clock,
      onDeadline: (spent) => {
        this.#cancelFactories.abort(new Deadline(spent));
        if (!pausing) return;
        // Paused, nothing else would end the runs parked at the cap nor the wait of the tasks not started.
        this.#cancelRuns.abort(new Deadline(spent));
        this.#skipRest();
        this.#parked.wake();
      },
    });
    if (this.#s.showProgress)
      this.#bar = openProgressBar({
        total: list.length,
        done: this.#done,
        ...(this.#s.capsCost ? { capUsd: () => pool.limits.maxCostUsd! } : {}),
        spentUsd: () => pool.usage.costUsd,
        ...(log === undefined ? {} : { onProblem: log.error }),
      });
    deadline.start();
    await this.raises?.start();
    try {
      await this.#parked.runSlots(
        Math.min(concurrency, list.length),
        () => this.#take(),
        (index, slot) => this.#runWhole(index, slot),
      );
    } finally {
      await this.raises?.stop();
      this.#answers?.stop();
      this.#bar?.stop();
      deadline.stop();
      signal?.removeEventListener('abort', onAbort);
    }
    await Promise.all(this.#noting);
    this.#s.endedRuns?.flush();
  }

  /** The progress line and `onProgress`, told of `event`. */
  #progress(event: BatchProgress['event']): void {
    const { onProgress } = this.#s.options;
    if (onProgress === undefined && this.#bar === undefined) return;
    const now: BatchProgress = {
      done: this.#done,
      total: this.#s.list.length,
      running: this.#running,
      outcomes: { ...this.outcomes },
      usage: this.#s.pool.usage,
      event,
    };
    this.#bar?.update(now);
    if (onProgress === undefined) return;
    try {
      const returned: unknown = onProgress(now);
      // An async callback's rejection would otherwise surface as an unhandled rejection.
      if (returned instanceof Promise)
        returned.catch((error: unknown) => this.#s.log?.error(`onProgress failed: ${messageOf(error)}`));
    } catch (error) {
      this.#s.log?.error(`onProgress threw: ${messageOf(error)}; the batch goes on`);
    }
  }

  /** Why no further run may start, once that is so; the reason sticks. */
  #stopReason(): Stop | undefined {
    if (this.#stopped !== undefined) return this.#stopped;
    const { signal } = this.#s.options;
    if (signal?.aborted) this.#stopped = { reason: 'aborted', message: abortMessage(signal.reason) };
    else {
      const spent = this.#s.pool.spent();
      if (spent !== undefined) this.#stopped = { reason: 'budget_exceeded', message: spent.message, spent };
    }
    return this.#stopped;
  }

  /** Moves `next` past the tasks a resumed batch does not run again. */
  #skipFinished(): void {
    while (this.#next < this.#s.list.length && this.runs[this.#next] !== undefined) this.#next += 1;
  }

  /** The batch stopped: every task not started is skipped, with the reason. */
  #skipRest(): void {
    const why = this.#stopReason();
    this.#skipFinished();
    const { list, earlier } = this.#s;
    if (why === undefined || this.#next >= list.length) return;
    let count = 0;
    for (; this.#next < list.length; this.#next++) {
      if (this.runs[this.#next] !== undefined) continue;
      count += 1;
      const before = earlier?.[this.#next];
      // A resumed run cut off before keeps what that attempt spent, so the totals count it.
      const cut = before?.kind === 'interrupted' ? before : undefined;
      let run = skippedRun(list[this.#next]!.id, new RunSkippedError(why.reason, why.message, why.spent), cut?.usage);
      if (cut?.salvaged !== undefined) run = { ...run, salvaged: cut.salvaged };
      // And why that money is uncertain or of unknown cost, over its attempts, as a run's report says.
      const uncertain = reasonsOver(undefined, cut?.attempts ?? [], 'uncertainWhy');
      const unpriced = reasonsOver(undefined, cut?.attempts ?? [], 'unpricedWhy');
      if (uncertain !== undefined) run = { ...run, uncertain };
      if (unpriced !== undefined) run = { ...run, unpriced };
      this.runs[this.#next] = run;
    }
    this.outcomes.skipped += count;
    this.#done += count;
    this.#s.log?.info(`${why.message}: skipping ${count} run${count === 1 ? '' : 's'} not yet started`);
    this.#progress({ type: 'skipped', count, reason: why.reason, message: why.message });
  }

  /** The next task to start, if one may: none once all are taken, or the batch stopped (the rest skipped). */
  #take(): number | undefined {
    this.#skipFinished();
    if (this.#next >= this.#s.list.length) return undefined;
    if (this.#stopReason() !== undefined) return void this.#skipRest();
    // Paused at the cap: the next task starts after a raise.
    if (this.#s.pool.paused) return undefined;
    return this.#next++;
  }

  /** One run from its start to its end; it holds `slot` except while parked. */
  async #runWhole(index: number, slot: Slot): Promise<void> {
    const { list, earlier, resuming, endedRuns } = this.#s;
    this.#running += 1;
    this.#progress({ type: 'started', index, id: list[index]!.id });
    const before = earlier?.[index];
    let resumeFrom: ResumeFrom | undefined;
    if (before?.kind === 'interrupted') {
      // Its journal, read before the attempt is set aside: what the run continues from.
      const journal = await resuming!.journal(index);
      resumeFrom = { journal, usage: resumedUsage(before.usage, journal) };
      // Kept, not overwritten, once the run goes on: what the cut-off attempt did and spent stays readable.
      await resuming!.setAside(index);
    }
    // A run's file that ends whole says what it ended with as it is written: it need not be read back.
    let noted = false;
    let uncertain: RunFileFacts['uncertain'] | undefined;
    let unpriced: RunFileFacts['unpriced'] | undefined;
    let own: AttemptSpend | undefined;
    const onRunFacts = (facts: RunFileFacts, file: string | undefined): void => {
      // Why money is uncertain or of unknown cost, for the report: the run's lines know each call's reason.
      if (facts.uncertain.length > 0) uncertain = facts.uncertain;
      if (facts.unpriced.length > 0) unpriced = facts.unpriced;
      // A resumed run's reasons cover the calls of the attempts cut off too, each call once.
      if (before?.kind === 'interrupted' && before.attempts !== undefined) {
        const attempts = [...before.attempts, facts.attempt];
        uncertain = reasonsOver(uncertain, attempts, 'uncertainWhy');
        unpriced = reasonsOver(unpriced, attempts, 'unpricedWhy');
      }
      own = facts.attempt;
      if (endedRuns === undefined || file === undefined) return;
      noted = true;
      try {
        // Noted with those reasons: a later resume that reads this entry reports the run as this batch does.
        const state = stateOfFacts(file, facts);
        noteEnded(
          endedRuns,
          file,
          fs.statSync(file),
          state.kind === 'finished' ? { ...state, uncertain, unpriced } : state,
        );
      } catch {
        // gone already: the next resume finds no file and says so
      }
    };
    const { countsEarlier, ...ran } = await this.#runOne(index, slot, resumeFrom, onRunFacts);
    // A run whose file never ended whole (no facts told): its reasons over the attempts cut off are theirs alone.
    if (own === undefined && before?.kind === 'interrupted' && before.attempts !== undefined) {
      uncertain = reasonsOver(uncertain, before.attempts, 'uncertainWhy');
      unpriced = reasonsOver(unpriced, before.attempts, 'unpricedWhy');
    }
    let run: RunReport = ran;
    if (uncertain !== undefined) run = { ...run, uncertain };
    if (unpriced !== undefined) run = { ...run, unpriced };
    if (before?.kind === 'interrupted') {
      // A run whose turn started counted the earlier spend in its usage; one that failed before (its agent, its history file) did not.
      const usage = countsEarlier === true ? run.usage : addUsage(before.usage, run.usage);
      run = {
        ...run,
        usage,
        resumed: run.resume?.mode ?? 'restarted',
        ...(before.salvaged === undefined ? {} : { salvaged: before.salvaged }),
      };
    }
    // Read beside the runs still going, not in the run's slot: the batch's pace stays the runs' own.
    if (endedRuns !== undefined && run.historyFile !== undefined && !noted) {
      // Attempts are set aside beside it only when it was resumed from one: no listing of the folder.
      const resumed = before?.kind === 'interrupted';
      const noting = taskState(run.historyFile, false, endedRuns, undefined, () => resumed);
      this.#noting.push(noting.catch(() => undefined)); // unreadable: the next resume says why
    }
    // A run that ended while parked (its approval timeout, an abort) held no slot.
    if (slot.held) this.#running -= 1;
    this.#done += 1;
    this.outcomes[run.outcome] += 1;
    this.runs[index] = run;
    this.#progress({ type: 'finished', index, run });
  }

  async #runOne(
    index: number,
    slot: Slot,
    resumeFrom: ResumeFrom | undefined,
    onRunFacts: RunTaskOptions['onRunFacts'],
  ): Promise<RunReport & Pick<TaskRun, 'countsEarlier'>> {
    const { list, pool, pausing, log, options } = this.#s;
    const { perRun, signal, onRun, resumeTools } = options;
    const task = list[index]!;
    const canAbort = signal !== undefined || pool.limits.maxWallMs !== undefined;
    const run = await runTask(task, {
      name: `tasks[${index}]`,
      // Object.assign, not a spread then more keys: see runTask.
      adapter: Object.assign(
        {},
        this.#s.runOptions(task),
        resumeFrom === undefined
          ? { budget: perRun ?? {}, sharedBudgets: [pool] }
          : resumeTools === undefined
            ? { budget: perRun ?? {}, sharedBudgets: [pool], resumeFrom }
            : { budget: perRun ?? {}, sharedBudgets: [pool], resumeFrom, resumeTools },
      ),
      // Without a batch signal nothing can cancel a run, and the adapter need not listen.
      // Runs parked at a pausing cap hear it too: the batch's deadline ends them there.
      ...(signal === undefined && !pausing ? {} : { signal: this.#cancelRuns.signal }),
      ...(canAbort ? { factorySignal: this.#cancelFactories.signal } : {}),
      ...this.#s.sinkFor(index),
      ...(onRun === undefined ? {} : { onRun: tellRun.bind(undefined, onRun, task.id, index) }),
      ...(log === undefined ? {} : { onProblem: log.error }),
      onRunFacts,
      awaitPause: (agent, paused) => this.#parked.park(task.id, index, slot, agent, paused),
      awaitFrameworkPause: (run, paused) => this.#parked.park(task.id, index, slot, run, paused),
    });
    const wait = this.#parked.takeWait(index);
    const capWait = this.#parked.takeCapWait(index);
    return {
      id: task.id,
      ...run,
      ...(wait === undefined ? {} : { approval: { ...wait } }),
      ...(capWait === undefined ? {} : { capWait: { ...capWait } }),
    };
  }
}

/** `onRun` told of run `index`'s adapter (a function bound per run). */
function tellRun(
  onRun: NonNullable<BatchOptions['onRun']>,
  id: string,
  index: number,
  agent: AgentWithStateMachine,
): ReturnType<NonNullable<BatchOptions['onRun']>> {
  return onRun({ id, index, agent });
}

/** Why money is uncertain (or unpriced) over `attempts`, bounded from below by the live file's `live`; undefined for none. */
function reasonsOver(
  live: RunFileFacts['uncertain'] | undefined,
  attempts: readonly AttemptSpend[],
  pick: 'uncertainWhy' | 'unpricedWhy',
): RunFileFacts['uncertain'] | undefined {
  const reasons = reasonsOverAttempts(
    live ?? [],
    attempts.map((a) => a[pick]),
  );
  return reasons.length > 0 ? reasons : undefined;
}

function countOutcomes(): Record<RunOutcome, number> {
  return { end_of_turn: 0, wrapped_up: 0, budget_exceeded: 0, stalled: 0, error: 0, cancelled: 0, skipped: 0 };
}
