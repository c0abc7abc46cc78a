// The adapter's options are checked in resolveAgentSettings and documented in
// AgentWithStateMachineOptions; a turn's work is TurnRunner's and its parts' (callLLM, runTools, UsageMeter).
import EventEmitter from 'eventemitter3';
import type { StateName } from '../../states/StateName';
import type { AgentLoop } from './AgentLoop';
import type { AgentEvents } from './AgentEvents';
import { safeLog, type AgentLogger } from './AgentLogger';
import { assertBoundsCalls } from './options/assertBoundsCalls';
import { isStrictCap } from './money/isStrictCap';
import { Budget } from './money/Budget';
import { assertBudgetLimits, type BudgetLimits } from './BudgetLimits';
import { InvalidArgumentError } from '../machine/InvalidArgumentError';
import type { StateMachine } from '../machine/StateMachine';
import { TurnInProgressError } from './TurnInProgressError';
import type { ResumeInfo } from './journal/RunRecording';
import { TurnRunner, type TurnResult } from './adapter/TurnRunner';
import type { TurnSettings } from './turn/TurnScope';
import type { UsageTotals } from './UsageTotals';
import { messageOf } from '../internal/messageOf';
import type { ApprovalDecision, ApprovalGate, PendingApproval } from './ApprovalGate';
import { assertEndings } from './endings/assertEndings';
import { assertKnownOptions } from '../machine/assertKnownOptions';
import { RUN_TURN_OPTION_KEYS } from './options/optionKeys';
import type { AgentWithStateMachineOptions, RunTurnOptions } from './adapter/AgentWithStateMachineOptions';
import { resolveAgentSettings } from './adapter/resolveAgentSettings';
import { deferred, type Deferred } from './adapter/deferred';
import { CapPause } from './money/CapPause';

export type { AgentWithStateMachineOptions, RunTurnOptions } from './adapter/AgentWithStateMachineOptions';
// Re-exported for the framework mirrors, which make their machine as the adapter does.
export { asMachineLogger } from './options/asMachineLogger';
export { resolveJournal } from './journal/resolveJournal';

/** The options of a runTurn call without any: one object for all of them, only read. */
const NO_OPTIONS: RunTurnOptions = Object.freeze({});

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyListener = (...args: any[]) => void;

/**
 * Wraps an existing agent loop: hand over the operations it already has, and each
 * `runTurn` drives them through the sixteen states — validated, timed and recorded in
 * `machine` — with cancellation, retries and budgets enforced. It never asks the machine for
 * a move the table forbids. Where the table has no edge for what happened, the move is
 * explicitly forced with its reason: cancellation outside CheckingForCancellation, and a
 * broken contract in CheckingGitCommits or RunningAutoformatters (→ Error). Move the
 * machine yourself only between turns: a turn that finds it moved ends in Error
 * (`MachineMovedError`) instead of asking for an illegal move.
 */
export class AgentWithStateMachine {
  /** The machine the turns run through: its history, events and current state. */
  readonly machine: StateMachine<StateName>;
  #budget: Budget;
  readonly #sharedBudgets: readonly Budget[];
  readonly #clock: () => number;
  readonly #logger: AgentLogger | undefined;
  readonly #emitter = new EventEmitter();
  readonly #wrappers = new Map<string, Map<unknown, AnyListener[]>>();
  /** What every turn needs, made once. */
  readonly #settings: TurnSettings;
  /** This agent's own budget and the shared ones, in the order turns charge and check them. */
  #budgets: readonly Budget[];
  #turns = 0;
  #active: TurnRunner | undefined;
  #spare: AbortController | undefined;
  /** The approval requests the running turn waits on, if it does. */
  #gate: ApprovalGate | undefined;
  /** The running turn's wait at a pausing shared cap, if it waits there. */
  #capPause: CapPause | undefined;
  /** Settles with the running turn's next stop: its end, or a wait for approval or a raise. */
  #stop: Deferred<TurnResult> | undefined;

  constructor(agent: AgentLoop, options: AgentWithStateMachineOptions = {}) {
    const { settings, budget } = resolveAgentSettings(agent, options, {
      hears: (event) => this.#hears(event),
      emit: (event, ...args) => this.#emit(event, ...args),
    });
    this.machine = settings.machine;
    this.#budget = budget;
    this.#sharedBudgets = settings.shared;
    this.#clock = settings.clock;
    this.#logger = settings.logger;
    this.#budgets = [budget, ...settings.shared];
    this.#settings = settings;
  }

  /** Usage over all turns so far. */
  get usage(): UsageTotals {
    return this.#budget.usage;
  }

  /** With `resumeFrom`: how this agent resumed (recovered from the journal, or restarted), and what it served so far. */
  get resumed(): ResumeInfo | undefined {
    const info = this.#settings.recording?.info;
    return info === undefined ? undefined : { ...info };
  }

  /** The limits of this agent's own budget. */
  get budget(): BudgetLimits {
    return this.#budget.limits;
  }

  /**
   * Replaces this agent's own limits, keeping the usage so far: raise a spent budget to go on,
   * or tighten it. Between turns only (a running turn throws `TurnInProgressError`).
   */
  setBudget(limits: BudgetLimits): void {
    assertBudgetLimits(limits, 'limits');
    if (limits === undefined) throw new InvalidArgumentError('limits', 'an object of limits', limits);
    if (this.#active !== undefined) throw new TurnInProgressError(this.#turns, this.machine.current);
    if (isStrictCap(limits))
      assertBoundsCalls(this.#settings.agent, 'limits.maxCostUsd', 'agent', this.#settings.compact !== undefined);
    const budget = this.#budget.withLimits(limits);
    assertEndings(this.#settings, [budget, ...this.#sharedBudgets]);
    this.#budget = budget;
    this.#budgets = [this.#budget, ...this.#sharedBudgets];
  }

  /** Whether a turn is running now. */
  get running(): boolean {
    return this.#active !== undefined;
  }

  /**
   * Adds a listener of the adapter's events (`turnStart`, `llmAttempt`, `toolCall`, `turnEnd`,
   * `listenerError`). One that throws or rejects is reported as `listenerError` and never
   * changes a turn.
   */
  on<E extends keyof AgentEvents>(event: E, listener: (...args: AgentEvents[E]) => unknown): this {
    this.#emitter.on(event, this.#wrap(event, listener, false));
    return this;
  }

  /** Adds a listener that runs once. */
  once<E extends keyof AgentEvents>(event: E, listener: (...args: AgentEvents[E]) => unknown): this {
    this.#emitter.on(event, this.#wrap(event, listener, true));
    return this;
  }

  /** Removes a listener added with `on` or `once`. */
  off<E extends keyof AgentEvents>(event: E, listener: (...args: AgentEvents[E]) => unknown): this {
    const list = this.#wrappers.get(event)?.get(listener);
    const safe = list?.pop();
    if (safe !== undefined) this.#emitter.off(event, safe);
    if (list !== undefined && list.length === 0) this.#wrappers.get(event)!.delete(listener);
    return this;
  }

  /**
   * Runs one turn for `input` (the user's message) to its end and says how it ended. It does
   * not throw for what happens inside the turn — failures, cancellation and budgets are
   * outcomes, with `error` saying why; it throws only for misuse (a non-string input, a turn
   * already running).
   */
  async runTurn(input: string, options: RunTurnOptions = NO_OPTIONS): Promise<TurnResult> {
    if (typeof input !== 'string') throw new InvalidArgumentError('input', 'a string (the user message)', input);
    if (typeof options !== 'object' || options === null)
      throw new InvalidArgumentError('options', 'an object { signal?, budget? }', options);
    if (options !== NO_OPTIONS) assertKnownOptions(options, RUN_TURN_OPTION_KEYS, 'runTurn()');
    const { signal, budget } = options;
    if (signal !== undefined && !(signal instanceof AbortSignal))
      throw new InvalidArgumentError('signal', 'an AbortSignal', signal);
    assertBudgetLimits(budget, 'options.budget');
    if (isStrictCap(budget))
      assertBoundsCalls(
        this.#settings.agent,
        'options.budget.maxCostUsd',
        'agent',
        this.#settings.compact !== undefined,
      );
    if (budget !== undefined) assertEndings(this.#settings, [new Budget(budget, { label: 'options.budget' })]);
    if (this.#active !== undefined) throw new TurnInProgressError(this.#turns, this.machine.current);

    // A turn's controller is kept for the next turn when it was never aborted: its turn ended
    // with no listener left on it (TurnRunner aborts it otherwise). Bench: turncore (a new
    // controller and an abort per turn read 1.45× the round start, against 0.80×).
    const controller = this.#spare ?? new AbortController();
    this.#spare = undefined;
    this.#turns += 1;
    const turn = this.#turns;
    let budgets = this.#budgets;
    if (budget !== undefined && Object.values(budget).some((v) => v !== undefined))
      budgets = [...budgets, new Budget(budget, { label: 'turn budget' })];
    const stop = (this.#stop = deferred<TurnResult>());
    const runner = new TurnRunner(this.#settings, budgets, turn, controller, (gate, paused) => {
      if (gate instanceof CapPause) this.#capPause = gate;
      else this.#gate = gate;
      // The caller gets this stop now; the next one (`continueTurn()`) gets a promise of its own.
      const now = this.#stop;
      this.#stop = deferred<TurnResult>();
      now?.resolve(paused);
      if (gate instanceof CapPause) return;
      if (this.#emitter.listenerCount('approvalRequested') > 0)
        this.#emit('approvalRequested', { turn, requests: paused.pendingApprovals ?? [] });
    });
    const forward = signal === undefined ? undefined : (): void => runner.abort(signal.reason);
    if (signal?.aborted) runner.abort(signal.reason);
    else if (forward !== undefined) signal!.addEventListener('abort', forward, { once: true });
    this.#active = runner;
    void runner.run(input).then((result) => {
      try {
        this.#logEnd(result);
        if (this.#emitter.listenerCount('turnEnd') > 0) this.#emit('turnEnd', { turn, result, endedAt: this.#clock() });
      } finally {
        if (forward !== undefined) signal!.removeEventListener('abort', forward);
        this.#active = undefined;
        this.#gate = undefined;
        this.#capPause = undefined;
        if (!controller.signal.aborted) this.#spare = controller;
        this.#stop?.resolve(result);
      }
    });
    return stop.promise;
  }

  /** Whether the running turn waits for answers to approval requests (`pendingApprovals`). */
  get awaitingApproval(): boolean {
    return this.#gate !== undefined && !this.#gate.complete;
  }

  /** The tool calls the running turn waits on, without an answer yet (empty when none). */
  get pendingApprovals(): PendingApproval[] {
    return this.#gate?.pending ?? [];
  }

  /**
   * Approves a call waiting for approval; with `{ input }`, it runs with that input instead of
   * the LLM's. Once every waiting call has an answer the turn goes on; `continueTurn()` gives its result.
   */
  approve(callId: string, options: { input?: unknown } = {}): void {
    if (typeof options !== 'object' || options === null)
      throw new InvalidArgumentError('options', 'an object { input? }', options);
    this.#answer('input' in options ? { callId, approved: true, input: options.input } : { callId, approved: true });
  }

  /** Denies a call waiting for approval: it does not run, and the LLM gets `denied: <reason>` as its result. */
  deny(callId: string, reason = 'denied by a person'): void {
    if (typeof reason !== 'string') throw new InvalidArgumentError('reason', 'a string', reason);
    this.#answer({ callId, approved: false, reason });
  }

  /** Whether the running turn waits at a pausing shared cap for a raise (outcome `awaiting_budget`). */
  get awaitingBudget(): boolean {
    return this.#capPause !== undefined;
  }

  /**
   * The turn waiting at a pausing shared cap (`awaiting_budget`) plans its refused LLM call
   * again: call it once that budget was raised. A call that still does not fit stops the turn
   * with `awaiting_budget` again; `continueTurn()` gives its next stop.
   */
  retryBudget(): void {
    const pause = this.#capPause;
    if (pause === undefined)
      throw new InvalidArgumentError('retryBudget()', 'a turn waiting with outcome awaiting_budget', undefined);
    this.#capPause = undefined;
    pause.open();
  }

  /**
   * The result of the turn that last stopped for approval or at a pausing cap, once it stops
   * again: it ended, or it waits again (`awaiting_approval`, `awaiting_budget`).
   * Throws when no turn has stopped so.
   */
  continueTurn(): Promise<TurnResult> {
    if (this.#stop === undefined)
      throw new InvalidArgumentError(
        'continueTurn()',
        'a turn that stopped with outcome awaiting_approval or awaiting_budget',
        undefined,
      );
    return this.#stop.promise;
  }

  #answer(decision: ApprovalDecision): void {
    if (typeof decision.callId !== 'string')
      throw new InvalidArgumentError('callId', 'the id of a tool call waiting for approval', decision.callId);
    const gate = this.#gate;
    if (gate === undefined || gate.complete)
      throw new InvalidArgumentError(
        'callId',
        'the id of a tool call waiting for approval (none is waiting)',
        decision.callId,
      );
    gate.decide(decision);
    // The last answer lets the turn go on.
    if (gate.complete) this.#gate = undefined;
  }

  /**
   * Cancels the running turn: no further tool starts, the running operation gets its signal
   * (and `cancelGraceMs` to stop), and the turn ends as `cancelled`. Returns whether a turn
   * was running. The next turn runs normally.
   */
  cancel(reason = 'cancelled by the caller'): boolean {
    if (typeof reason !== 'string') throw new InvalidArgumentError('reason', 'a string', reason);
    if (this.#active === undefined || this.#active.aborted) return false;
    this.#active.abort(reason);
    return true;
  }

  /** An ordinary cancel is news (info); a turn ended by a fault is a warning. */
  #logEnd(result: TurnResult): void {
    if (result.outcome === 'end_of_turn') return;
    const meta = { turn: result.turn, outcome: result.outcome };
    const message = `turn ${result.turn} ended ${result.outcome}${result.error === undefined ? '' : `: ${result.error.message}`}`;
    safeLog(this.#logger, result.outcome === 'cancelled' ? 'info' : 'warn', message, meta);
  }

  #hears(event: keyof AgentEvents): boolean {
    return this.#emitter.listenerCount(event) > 0;
  }

  #emit<E extends keyof AgentEvents>(event: E, ...args: AgentEvents[E]): void {
    if (this.#emitter.listenerCount(event) === 0) return;
    try {
      this.#emitter.emit(event, ...args);
    } catch (error) {
      // The wrappers contain their listeners; this is a last guard.
      safeLog(this.#logger, 'error', `emitting '${event}' threw: ${messageOf(error)}`, {});
    }
  }

  #wrap(event: keyof AgentEvents, listener: unknown, once: boolean): AnyListener {
    if (typeof listener !== 'function') throw new InvalidArgumentError('listener', 'a function', listener);
    const report = (error: unknown): void => {
      safeLog(this.#logger, 'error', `an '${event}' listener threw: ${messageOf(error)}`, {
        stack: error instanceof Error ? error.stack : undefined,
      });
      if (event !== 'listenerError') this.#emit('listenerError', error, event);
    };
    const safe: AnyListener = (...args: unknown[]) => {
      if (once) this.off(event, listener as AnyListener);
      try {
        const out: unknown = (listener as AnyListener)(...args);
        // An async listener's rejection is contained too.
        if (typeof out === 'object' && out !== null && typeof (out as Promise<unknown>).then === 'function')
          (out as Promise<unknown>).then(undefined, report);
      } catch (error) {
        report(error);
      }
    };
    let byListener = this.#wrappers.get(event);
    if (byListener === undefined) this.#wrappers.set(event, (byListener = new Map()));
    const list = byListener.get(listener) ?? [];
    list.push(safe);
    byListener.set(listener, list);
    return safe;
  }
}
