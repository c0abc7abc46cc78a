import type { AgentLoop } from '../../agent/AgentLoop';
import { AgentWithStateMachine } from '../../agent/AgentWithStateMachine';
import { Deadline } from '../../agent/money/Deadline';
import { BudgetExceededError, OperationError, TurnCancelledError } from '../../agent/TurnError';
import { emptyUsage } from '../../agent/UsageTotals';
import type { RunSink } from '../keeping/RunStore';
import { RunSinkForward } from './RunSinkForward';
import { isThenable } from '../../internal/isThenable';
import { messageOf } from '../../internal/messageOf';
import { InvalidArgumentError } from '../../machine/InvalidArgumentError';
import { settleWithGrace } from '../../internal/settleWithGrace';
import { sleep as realSleep, type Sleep } from '../../internal/sleep';
import { assertNoRun, isFrameworkTask } from './checkBatchTasks';
import { runFrameworkTask, type FrameworkTask } from './runFrameworkTask';
import type { RunTaskOptions } from './RunTaskOptions';
import type { TaskRun } from './TaskRun';
import { OPTION_DEFAULTS } from '../../internal/optionTable';

export type { RunTaskOptions } from './RunTaskOptions';
export type { TaskRun } from './TaskRun';

/** Where a run's agent comes from: the loop itself, or a factory called when the run starts. */
export type AgentSource = AgentLoop | ((ctx: { signal: AbortSignal }) => AgentLoop | Promise<AgentLoop>);

/** One agent task: a single turn of its agent on `input`. */
export interface AgentTask {
  /** Names the run in reports, errors and its history file. */
  id: string;
  /** The user message the run starts with. */
  input: string;
  agent: AgentSource;
}

/**
 * Runs one task: an agent task, or a framework task (`{ id, input?, drive(mirror) }`, see
 * `runFrameworkTask`). For an agent task it builds its agent (a factory gets the abort signal and, once aborted,
 * `cancelGraceMs` to settle before it is abandoned), runs one turn through its own
 * `AgentWithStateMachine`, writes its history file, and says how it ended. It never throws
 * for what happens in the run: a failing factory, adapter option, history file or `onRun` ends
 * the run as `error` (or `cancelled`) with the cause. `runBatch` and the BullMQ worker run
 * each task through it; their own part is only the scheduling around it.
 */
export async function runTask(task: AgentTask | FrameworkTask, options: RunTaskOptions = {}): Promise<TaskRun> {
  // A caller that bypasses runBatch's check (the internal subpath) meets the same refusal.
  assertNoRun(task, options.name ?? 'task');
  if (isFrameworkTask(task)) return runFrameworkTask(task, options);
  const {
    name = 'task',
    adapter: adapterOptions = {},
    signal,
    factorySignal = signal,
    historyFile,
    openSink,
    onRun,
    onProblem,
  } = options;
  const clock = adapterOptions.clock ?? Date.now;
  const started = clock();
  let sink: RunSink | undefined;
  const forward = historyFile === undefined && openSink === undefined ? undefined : new RunSinkForward();
  let adapter: AgentWithStateMachine | undefined;
  let turnStarted = false;
  let historyError: Error | undefined;
  let runEnded: (() => void) | void = undefined;
  let ended: Pick<TaskRun, 'outcome' | 'usage' | 'transitions' | 'error'>;
  try {
    const made =
      typeof task.agent === 'function'
        ? resolveAgent(
            task.agent,
            name,
            factorySignal,
            adapterOptions.cancelGraceMs ?? OPTION_DEFAULTS.cancelGraceMs,
            adapterOptions.sleep ?? realSleep,
          )
        : task.agent;
    const agent = await made;
    // The file is opened once the adapter has accepted the agent, so only runs that really
    // start have one; until then the machine makes no move, so the forwarder has nothing to pass on.
    if (forward !== undefined && adapterOptions.sink !== undefined)
      throw new InvalidArgumentError(
        'adapter.sink',
        'left out when `historyFile` or a store is given (the run writes its history)',
        adapterOptions.sink,
      );
    adapter = new AgentWithStateMachine(
      agent,
      // Object.assign, not a spread then a key, which V8 keeps in a slow form (bench: batch).
      forward === undefined ? adapterOptions : Object.assign({}, adapterOptions, { sink: forward }),
    );
    if (forward !== undefined) {
      const { table } = adapter.machine;
      sink =
        historyFile === undefined
          ? await forward.openStore(table, openSink!, options)
          : forward.openFile(table, historyFile, options);
      adapter.machine.on('sinkError', ({ error }) => (historyError ??= asError(error, 'history sink')));
    }
    runEnded = onRun?.(adapter);
    turnStarted = true;
    // Without a signal nothing can cancel the run, and the adapter need not listen.
    let result = await adapter.runTurn(task.input, signal === undefined ? undefined : { signal });
    // A run waiting for approval or a raise goes on when its calls are answered or the cap raised
    // (through `onRun`'s adapter, or the batch's parking, which `awaitPause` is).
    const { awaitPause } = options;
    while (result.outcome === 'awaiting_approval' || result.outcome === 'awaiting_budget')
      result = await (awaitPause === undefined ? adapter.continueTurn() : awaitPause(adapter, result));
    ended = { outcome: result.outcome, usage: result.usage, transitions: result.transitions, error: result.error };
  } catch (error) {
    // Only what runs outside a turn lands here (factory, history file, adapter options, onRun): runTurn itself does not throw.
    const deadline: unknown = factorySignal?.reason;
    if (error instanceof TurnCancelledError && deadline instanceof Deadline) {
      // A wall-time deadline passed while the agent factory hung: the budget ended this run.
      const { spent } = deadline;
      ended = {
        outcome: 'budget_exceeded',
        usage: emptyUsage(),
        transitions: 0,
        error: new BudgetExceededError(
          `${spent.message} while the agent was being created`,
          spent.limit,
          spent.used,
          spent.max,
        ),
      };
    } else {
      ended = {
        outcome: error instanceof TurnCancelledError ? 'cancelled' : 'error',
        usage: adapter?.usage ?? emptyUsage(),
        transitions: movesMade(adapter),
        error: asError(error, name),
      };
    }
  }
  try {
    if (typeof runEnded === 'function') runEnded();
  } catch (error) {
    onProblem?.(`onRun's end function threw for run ${task.id}: ${messageOf(error)}`);
  }
  try {
    const closed = sink?.close();
    // A store's sink commits what waits; a file's closes at once.
    if (closed !== undefined) await closed;
  } catch (error) {
    historyError ??= asError(error, 'history sink');
  }
  if (historyError !== undefined)
    onProblem?.(`the history file of run ${task.id} is incomplete: ${historyError.message}`);
  else forward?.tellFacts();
  const run: TaskRun = {
    outcome: ended.outcome,
    usage: ended.usage,
    durationMs: Math.max(0, clock() - started) || 0,
    transitions: ended.transitions,
  };
  // The turn's start counts what a cut-off attempt spent: before it, the batch counts that.
  if (adapterOptions.resumeFrom !== undefined) run.countsEarlier = turnStarted;
  if (sink !== undefined) run.historyFile = sink.path;
  if (ended.error !== undefined) run.error = ended.error;
  if (historyError !== undefined) run.historyError = historyError;
  const resume = adapter?.resumed;
  if (resume !== undefined) run.resume = resume;
  return run;
}

/**
 * Moves a run's machine made when no turn reported them (the run failed outside `runTurn`,
 * e.g. in `onRun`): each machine is the run's own, so its last record's seq counts them.
 */
function movesMade(adapter: AgentWithStateMachine | undefined): number {
  return adapter?.machine.history().at(-1)?.seq ?? 0;
}

/**
 * Calls the factory with the signal. If it aborts before the factory settles, the factory gets
 * `graceMs` to settle, then is abandoned: an abort must not wait on a hung factory. A factory
 * that fails or is abandoned after the abort ends the run as cancelled.
 */
function resolveAgent(
  factory: Exclude<AgentSource, AgentLoop>,
  name: string,
  signal: AbortSignal | undefined,
  graceMs: number,
  wait: Sleep,
): AgentLoop | Promise<AgentLoop> {
  if (signal !== undefined) return resolveAbortable(factory, name, signal, graceMs, wait);
  // Nothing can abort it: nothing to wait for but the factory itself.
  let made: AgentLoop | Promise<AgentLoop>;
  try {
    made = factory({ signal: NEVER_ABORTED });
  } catch (error) {
    throw new OperationError(`${name}.agent()`, error);
  }
  return isThenable(made) ? awaitFactory(made, name) : made;
}

async function awaitFactory(made: PromiseLike<AgentLoop>, name: string): Promise<AgentLoop> {
  try {
    return await made;
  } catch (error) {
    throw new OperationError(`${name}.agent()`, error);
  }
}

/** A factory whose run can be aborted: it gets `graceMs` to settle once the signal aborts, then is abandoned. */
async function resolveAbortable(
  factory: Exclude<AgentSource, AgentLoop>,
  name: string,
  signal: AbortSignal,
  graceMs: number,
  wait: Sleep,
): Promise<AgentLoop> {
  const settled = await settleWithGrace(() => factory({ signal }), signal, graceMs, wait);
  if (settled.kind === 'value') return settled.value;
  if (settled.kind === 'threw' && !signal.aborted) throw new OperationError(`${name}.agent()`, settled.error);
  const detail =
    settled.kind === 'abandoned'
      ? `the agent factory did not settle within ${graceMs} ms and was abandoned`
      : `the agent factory stopped: ${messageOf(settled.error)}`;
  throw new TurnCancelledError(
    `${abortMessage(signal.reason)} while the agent was being created; ${detail}`,
    'agent creation',
  );
}

/** What a factory gets when nothing can abort its run. */
const NEVER_ABORTED = new AbortController().signal;

/** Errors stay as they are; anything else thrown becomes an Error that shows it and keeps it as `cause`. */
function asError(value: unknown, operation: string): Error {
  return value instanceof Error ? value : new OperationError(operation, value);
}

/** Why a run was aborted, in words: `batch aborted`, with the reason when there is one worth repeating. */
export function abortMessage(reason: unknown): string {
  if (reason instanceof Deadline) return reason.spent.message;
  // A bare abort() gives a DOMException named AbortError: no reason worth repeating.
  let bare: boolean;
  try {
    bare =
      reason === undefined ||
      (typeof reason === 'object' && reason !== null && (reason as { name?: unknown }).name === 'AbortError');
  } catch {
    bare = false;
  }
  if (bare) return 'batch aborted';
  return `batch aborted: ${messageOf(reason)}`;
}
