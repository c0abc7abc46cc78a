import { StepMirror, type StepMirrorOptions } from '../../agent/StepMirror';
import { OperationError } from '../../agent/TurnError';
import { AGENT_OPTION_KEYS, MIRROR_CANNOT } from '../../agent/options/optionKeys';
import { assertKnownOptions } from '../../machine/assertKnownOptions';
import { InvalidArgumentError } from '../../machine/InvalidArgumentError';
import type { ResumeInfo } from '../../agent/journal/RunRecording';
import type { TurnResult } from '../../agent/TurnResult';
import { emptyUsage } from '../../agent/UsageTotals';
import type { RunSink } from '../keeping/RunStore';
import { RunSinkForward } from './RunSinkForward';
import { messageOf } from '../../internal/messageOf';
import type { RunTaskOptions } from './RunTaskOptions';
import type { TaskRun } from './TaskRun';
import { FrameworkTurn } from './FrameworkTurn';

/**
 * Drives a run a framework owns (an AI SDK `generateText` or `ToolLoopAgent`, an Agents SDK
 * `run()`, a LangGraph agent) with the mirror that records it: it puts the mirror on the
 * framework (e.g. `mirrorAISDK({ mirror, model, tools })`) and runs it. Its budgets are the
 * batch's: the same per-run and shared limits an adapter run meets, checked before each model
 * call and tool call.
 */
export type FrameworkDriver = (mirror: StepMirror, ctx: { signal: AbortSignal }) => unknown;

/** One task whose agent is a framework's loop: `drive` runs it with the mirror it is given. */
export interface FrameworkTask {
  /** Names the run in reports, errors and its history file. */
  id: string;
  /** The user message, for the history (the framework's own start event may set it instead). */
  input?: string;
  drive: FrameworkDriver;
}

/**
 * Runs one framework task as `runTask` runs an agent task: a mirror with the adapter options'
 * budgets, pricing, journal, logger and clock (the options only an adapter has — retries,
 * grace, tool concurrency — are the framework's own), its history file, and the run's
 * outcome. The run starts before `drive` is called; if the framework does not report its end,
 * the mirror ends it when `drive` settles (resolved: its end; rejected: Error, or cancelled).
 */
export async function runFrameworkTask(task: FrameworkTask, options: RunTaskOptions = {}): Promise<TaskRun> {
  const { name = 'task', adapter = {}, signal, historyFile, openSink, onProblem } = options;
  const clock = adapter.clock ?? Date.now;
  const started = clock();
  let sink: RunSink | undefined;
  const forward = historyFile === undefined && openSink === undefined ? undefined : new RunSinkForward();
  let historyError: Error | undefined;
  let mirror: StepMirror | undefined;
  let runStarted = false;
  let result: TurnResult | undefined;
  let failure: Error | undefined;
  try {
    assertKnownOptions(adapter, AGENT_OPTION_KEYS, `framework task \`${task.id}\``, MIRROR_CANNOT);
    for (const [key, why] of Object.entries(MIRROR_CANNOT)) {
      const value = (adapter as Record<string, unknown>)[key];
      // Refused, not dropped: the run ends in Error naming the option.
      if (value !== undefined && value !== false)
        throw new InvalidArgumentError(key, `left out of framework task \`${task.id}\`: ${why}`, value);
    }
    if (forward !== undefined && adapter.sink !== undefined)
      throw new InvalidArgumentError(
        'adapter.sink',
        'left out when `historyFile` or a store is given (the run writes its history)',
        adapter.sink,
      );
    const mirrorOptions: StepMirrorOptions = {
      budget: adapter.budget,
      sharedBudgets: adapter.sharedBudgets,
      externalBudgets: adapter.externalBudgets,
      pricing: adapter.pricing,
      onUnknownCost: adapter.onUnknownCost,
      ...(adapter.billing === undefined ? {} : { billing: adapter.billing }),
      journal: adapter.journal,
      ledger: adapter.ledger,
      ...(adapter.ledgerDefaultMaxCostUsd === undefined
        ? {}
        : { ledgerDefaultMaxCostUsd: adapter.ledgerDefaultMaxCostUsd }),
      ...(adapter.stall === undefined ? {} : { stall: adapter.stall }),
      ...(adapter.approvalTimeoutMs === undefined ? {} : { approvalTimeoutMs: adapter.approvalTimeoutMs }),
      // The batch's policy: the integration puts it on the tools it wraps, beside the framework's own approvals.
      ...(adapter.approve === undefined ? {} : { approve: adapter.approve }),
      logger: adapter.logger,
      clock: adapter.clock,
      maxHistorySize: adapter.maxHistorySize,
      ...(adapter.resumeFrom === undefined ? {} : { resumeFrom: adapter.resumeFrom }),
      ...(adapter.resumeTools === undefined ? {} : { resumeTools: adapter.resumeTools }),
      ...(forward === undefined ? (adapter.sink === undefined ? {} : { sink: adapter.sink }) : { sink: forward }),
      ...(signal === undefined ? {} : { signal }),
      // The framework is not known yet: the integration the task puts on the mirror refuses the
      // endings it cannot make (mirrorAISDK makes both), and a mirror driven by hand refuses them at its first call.
      honours: { wrapUp: true, budgetNote: true },
      // The framework's own tool approvals, and the batch's `approve`, park the run (AI SDK and Agents SDK `needsApproval`, LangGraph `interrupt()`).
      approvals: true,
      // One task, one run: a framework that calls again after the run ended is refused, and the
      // task's report is that run's, not an empty run started after it.
      singleRun: true,
    };
    mirror = new StepMirror(mirrorOptions);
    if (forward !== undefined) {
      const { table } = mirror.machine;
      sink =
        historyFile === undefined
          ? await forward.openStore(table, openSink!, options)
          : forward.openFile(table, historyFile, options);
      mirror.machine.on('sinkError', ({ error }) => (historyError ??= asError(error)));
    }
    mirror.runStart(task.input ?? '');
    runStarted = true;
    const turn = new FrameworkTurn(mirror);
    const { awaitFrameworkPause } = options;
    const m = mirror;
    if (awaitFrameworkPause === undefined)
      m.approvals.listen(({ pendingApprovals = [] }) => {
        // Nothing here could answer it: refused by name, not left waiting for ever.
        m.runFailed(
          new Error(
            `${name}: the framework stopped for approval of ${pendingApprovals.map((c) => `${c.name} (${c.callId})`).join(', ')}, and this runner cannot park a framework run (runBatch and the BullMQ worker park it): run the task in runBatch or on startBatchWorker({ drive }), or leave out the tools' needsApproval and the \`approve\` policy`,
          ),
        );
      });
    const whole = settleRun(task, m);
    result = await turn.start(whole);
    while (result.outcome === 'awaiting_approval')
      result = await (awaitFrameworkPause === undefined ? turn.continueTurn() : awaitFrameworkPause(turn, result));
  } catch (error) {
    failure = new OperationError(`${name}.drive`, error);
  }
  try {
    const closed = sink?.close();
    // A store's sink commits what waits; a file's closes at once.
    if (closed !== undefined) await closed;
  } catch (error) {
    historyError ??= asError(error);
  }
  if (historyError !== undefined)
    onProblem?.(`the history file of run ${task.id} is incomplete: ${historyError.message}`);
  else forward?.tellFacts();
  // A run that ended still waiting is an error (a pausing cap is refused for a framework run).
  const outcome =
    result === undefined || result.outcome === 'awaiting_approval' || result.outcome === 'awaiting_budget'
      ? 'error'
      : result.outcome;
  const run: TaskRun = {
    outcome,
    // Everything the task's mirror spent: a task whose framework ran twice (two generateText
    // calls) spent in both runs, and its row is its money, not its last run's.
    usage: mirror?.usage ?? emptyUsage(),
    durationMs: Math.max(0, clock() - started) || 0,
    transitions: result?.transitions ?? 0,
  };
  if (sink !== undefined) run.historyFile = sink.path;
  if (options.adapter?.resumeFrom !== undefined) {
    run.resume = resumeOf(mirror?.resumed);
    // The run's start counts what a cut-off attempt spent: before it, the batch counts that.
    run.countsEarlier = runStarted;
  }
  const error = result?.error ?? failure;
  if (error !== undefined) run.error = error;
  if (historyError !== undefined) run.historyError = historyError;
  return run;
}

/**
 * Runs the task's framework loop to its end: the mirror ends the run if the framework did not
 * report it (resolved: its end; rejected: Error, or cancelled when aborted).
 */
async function settleRun(task: FrameworkTask, mirror: StepMirror): Promise<TurnResult> {
  try {
    await task.drive(mirror, { signal: mirror.signal });
    return mirror.running ? mirror.runEnd() : mirror.result!;
  } catch (error) {
    return !mirror.running ? mirror.result! : mirror.signal.aborted ? mirror.runAborted() : mirror.runFailed(error);
  }
}

function asError(value: unknown): Error {
  return value instanceof Error ? value : new Error(`history sink: ${messageOf(value)}`);
}

/**
 * How a cut-off framework run resumed: recovered, when its integration served journaled
 * responses (the AI SDK's does); else restarted from the beginning, its earlier spend counted.
 */
function resumeOf(info: ResumeInfo | undefined): ResumeInfo {
  if (info === undefined) return { ...RESTARTED, reason: 'the run failed before it started' };
  if (info.recordedCalls > 0) return { ...info, mode: 'recovered' };
  const reason = info.reason ?? info.diverged ?? 'the framework asked for no journaled response';
  return { ...info, mode: 'restarted', reason };
}

const RESTARTED: ResumeInfo = Object.freeze({
  mode: 'restarted',
  recordedCalls: 0,
  servedTools: 0,
  rerunTools: 0,
  interruptedTools: 0,
});
