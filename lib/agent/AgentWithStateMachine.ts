// Past 400 lines because the adapter checks every option by name, with its documentation; a
// turn's work is TurnRunner's and its parts' (callLLM, runTools, UsageMeter).
import EventEmitter from 'eventemitter3';
import type { Logger } from 'winston';
import type { StateName } from '../../states/StateName';
import type { AgentLoop, Pricing } from './AgentLoop';
import type { AgentEvents } from './AgentEvents';
import { isAgentLogger, safeLog, type AgentLogger } from './AgentLogger';
import { assertBoundsCalls } from './assertBoundsCalls';
import { isStrictCap } from './isStrictCap';
import { Budget } from './Budget';
import { assertBudgetLimits, type BudgetLimits } from './BudgetLimits';
import type { ExternalBudget } from './ExternalBudget';
import { getDefaultLogger } from '../machine/defaultLogger';
import { levelIsFixed } from '../machine/levelIsFixed';
import { InvalidArgumentError } from '../machine/InvalidArgumentError';
import { defaultShouldRetry, type ResolvedRetry } from './retryAfter';
import type { RetryOptions } from './retryDelay';
import { sleep as realSleep, type Sleep } from '../internal/sleep';
import { StateMachine, type StateMachineOptions } from '../machine/StateMachine';
import { TurnInProgressError } from './TurnInProgressError';
import type { JournalOptions } from './JournalEntry';
import { journalWriter } from './journalWriter';
import { resumeRecording, type ResumeFrom, type ResumeInfo } from './RunRecording';
import type { OnUnknownCost } from './priceResponse';
import { TurnRunner, type TurnResult } from './TurnRunner';
import type { TurnSettings } from './TurnScope';
import type { UsageTotals } from './UsageTotals';
import { messageOf } from '../internal/messageOf';
import type { ApprovalDecision, ApprovalGate, ApprovalPolicy, PendingApproval } from './ApprovalGate';
import { assertTableCarries } from './requiredEdges';
import { assertEndings } from './assertEndings';
import type { TransitionTable } from '../machine/TransitionTable';
import { DEFAULT_TABLE } from '../machine/transitions';
import { assertKnownOptions } from '../machine/assertKnownOptions';
import { AGENT_OPTION_KEYS, RUN_TURN_OPTION_KEYS } from './optionKeys';
import type { StallOptions } from './StallOptions';
import { journalThrough, watchFor } from './watchFor';

/** Options of `new AgentWithStateMachine(loop, options)`: the machine's options plus budgets, retries and cancellation grace. */
export interface AgentWithStateMachineOptions extends Omit<StateMachineOptions<StateName>, 'table' | 'logger'> {
  /**
   * The table the turns run through. Default: the sixteen-state table. Give an extended one
   * (`extendTable(DEFAULT_TABLE, APPROVAL_EXTENSION)`, …) to use the extension states: the
   * adapter checks here that it has every edge the other options will ask for, and names any
   * missing one.
   */
  table?: TransitionTable<string>;
  /**
   * Which tool calls wait for a person before they run: tool names mapped to `true`, or a
   * function of the call. A turn with such a call stops in AwaitingApproval and returns
   * outcome `awaiting_approval`; answer with `approve()` / `deny()`, then `continueTurn()`. Needs a
   * table with `APPROVAL_EXTENSION`.
   */
  approve?: ApprovalPolicy;
  /** How long a turn waits for approval answers before it ends in ApprovalTimedOut. Default: no limit. */
  approvalTimeoutMs?: number;
  /**
   * Compact the conversation when an LLM call fails because it is longer than the model's
   * context (`isContextOverflow`): the run moves to Compacting, the loop's `compact` operation
   * runs, and the call is made once more. Needs the loop's `compact` and a table with
   * `COMPACTION_EXTENSION`. Default off.
   */
  compact?: boolean;
  /**
   * Watch for loops that go nowhere — the same tool call with the same input `sameToolCall`
   * times (3), the same text twice in a row, `idleCalls` calls (8) with no new tool call — and
   * your own `detectors`: when one fires after a response that asks for tools, the run moves to
   * Stalled and either nudges the model (one message with the next tool results) or stops,
   * outcome `stalled`. `true` for the defaults (nudge, then stop). Needs a table with
   * `STALL_EXTENSION`; with `ledger`, `journal` on too (ledger lines hold no responses). Default off.
   */
  stall?: boolean | StallOptions;
  /**
   * Any logger with `error`, `warn`, `info` and `debug` methods of `(message, meta)` — winston,
   * pino, console — or `false` for none. A logger that throws never changes an outcome.
   * Default: a shared winston logger to stderr at `AGENT_SM_LOG_LEVEL` or `warn`.
   */
  logger?: AgentLogger | Logger | false;
  /** This agent's own limits, over all its turns. `maxWallMs` is a deadline: it aborts the running operation. */
  budget?: BudgetLimits;
  /** Further budgets charged alongside this agent's own, e.g. a batch's shared pool. */
  sharedBudgets?: readonly Budget[];
  /**
   * Budgets kept outside this process (a batch's limits in Redis): `reserve()` is awaited
   * before every LLM call and tool call, `charge()` as usage arrives. A spent limit stops
   * the turn as an in-memory one does; a failing one ends it in Error.
   */
  externalBudgets?: readonly ExternalBudget[];
  /** Retries of a failed LLM call, with exponential backoff, jitter and Retry-After. Default 2 retries from 500 ms. */
  retry?: RetryOptions;
  /** After cancellation, how long a running operation may take to stop before it is abandoned. Default 2,000 ms. */
  cancelGraceMs?: number;
  /** How many tool calls of one response run at once: a positive integer or `Infinity`. Default 1. */
  toolConcurrency?: number;
  /** Computes a response's cost in USD from its tokens when it reports no `costUsd`. */
  pricing?: Pricing;
  /**
   * When `maxCostUsd` is set and a response's cost is unknown (or `maxTokens` is set and it
   * reports no tokens): `'error'` (default) ends the turn in Error; `'warn'` logs once per
   * agent and notes it in the history; `'ignore'` goes on.
   */
  onUnknownCost?: OnUnknownCost;
  /** How the adapter waits (backoff, grace). Tests pass one that does not really wait. */
  sleep?: Sleep;
  /** Source of jitter, [0, 1). Default Math.random. */
  random?: () => number;
  /**
   * Keep a journal of every LLM attempt (its input, and the response as the loop returned it,
   * with its cost, or its error) and every tool call (input and result) beside the moves, in
   * the sink (which must take journal lines: `JsonlHistorySink` does). Each entry is written
   * before the move that follows it. Credential-named fields (`apiKey`, `authorization`,
   * `password`, …) are redacted; `{ redact }` sees every entry after that. Default off.
   */
  journal?: boolean | JournalOptions;
  /**
   * The money ledger without the journal's content: before each LLM attempt a `reserve` line
   * states the most it may cost (written and fsync'ed before the call starts), and an `llm`
   * line after it its usage and cost, with no input or response. On whenever `journal` is.
   * Needs a sink that takes journal lines. Default off.
   */
  ledger?: boolean;
  /**
   * The reservation a ledger line states for a call whose worst case is unknown (no
   * `llmCallBound`, or no price for the model), in USD. Without it such a line states no
   * amount, and readers count the call as of unknown cost (never $0).
   */
  ledgerDefaultMaxCostUsd?: number;
  /**
   * Under a strict `maxCostUsd` with little left, a request's max output tokens are lowered to
   * what fits (`ctx.maxOutputTokens`), but never below this: a call that does not fit even
   * with this many output tokens is not made (budget_exceeded). Default 256.
   */
  minOutputTokens?: number;
  /**
   * Resume an interrupted run of this conversation from its journal (`{ journal, usage?, tools? }`,
   * usually from `resumeAgent(file, loop)` or `runBatch`'s `resume`). Run the same turns again
   * (same inputs): each recorded LLM response is handed to the loop's `acceptRecorded` instead
   * of a request, as long as the run asks for the recorded calls, then the run goes live. Tool
   * calls of recorded responses follow `tools` (default: their journaled results are replayed,
   * the tools not run again). The earlier spend (`usage`) counts in this agent's own usage and
   * budget. A loop without `acceptRecorded` starts from the beginning, its earlier spend still
   * counted. `agent.resumed` says which happened.
   */
  resumeFrom?: ResumeFrom;
}

/** Options of one `runTurn(input, options)` call. */
export interface RunTurnOptions {
  /** Cancels the turn when it aborts, as `cancel()` does. */
  signal?: AbortSignal;
  /** Limits for this turn alone, on top of the agent's own. */
  budget?: BudgetLimits;
}

/** The options of a runTurn call without any: one object for all of them, only read. */
const NO_OPTIONS: RunTurnOptions = Object.freeze({});

const REQUIRED = ['sendUserMessage', 'sendToolResults', 'runTool'] as const;
const OPTIONAL = [
  'checkGitCommits',
  'runAutoformatters',
  'gatherAdditionalMessages',
  'settleToolCalls',
  'llmCallBound',
  'acceptRecorded',
  'compact',
] as const;

/** `minOutputTokens` when not given: enough for a short answer or a tool call. */
const DEFAULT_MIN_OUTPUT_TOKENS = 256;

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
  /** Settles with the running turn's next stop: its end, or a wait for approval. */
  #stop: Deferred<TurnResult> | undefined;

  constructor(agent: AgentLoop, options: AgentWithStateMachineOptions = {}) {
    assertAgentLoop(agent);
    if (typeof options !== 'object' || options === null)
      throw new InvalidArgumentError('options', 'an object', options);
    assertKnownOptions(options, AGENT_OPTION_KEYS, 'new AgentWithStateMachine()');
    const {
      budget,
      sharedBudgets = [],
      externalBudgets = [],
      retry = {},
      cancelGraceMs = 2000,
      toolConcurrency = 1,
      pricing,
      onUnknownCost = 'error',
      sleep = realSleep,
      random = Math.random,
      logger,
      journal = false,
      ledger = false,
      ledgerDefaultMaxCostUsd,
      minOutputTokens = DEFAULT_MIN_OUTPUT_TOKENS,
      resumeFrom,
      table,
      approve,
      approvalTimeoutMs,
      compact = false,
      stall,
      // The machine's own options, named rather than gathered with `...rest`: a rest object costs
      // a run microseconds to build, and a batch makes an adapter per run.
      maxHistorySize,
      clock,
      sink,
    } = options;
    if (typeof compact !== 'boolean') throw new InvalidArgumentError('compact', 'true or false', compact);
    if (compact && typeof agent.compact !== 'function')
      throw new InvalidArgumentError('agent.compact', 'a function (the `compact` option is on)', agent.compact);
    if (approve !== undefined && typeof approve !== 'function' && (typeof approve !== 'object' || approve === null))
      throw new InvalidArgumentError(
        'approve',
        'an object { toolName: true } or a function (call) => boolean',
        approve,
      );
    if (approvalTimeoutMs !== undefined) assertNonNegative(approvalTimeoutMs, 'approvalTimeoutMs');
    if (approvalTimeoutMs !== undefined && approve === undefined)
      throw new InvalidArgumentError('approve', 'an approval policy when approvalTimeoutMs is set', approve);
    const stallWatch = watchFor(stall, journal, ledger);
    const machineTable = table ?? (DEFAULT_TABLE as TransitionTable<string>);
    assertTableCarries(machineTable, {
      approval: approve !== undefined,
      timeout: approvalTimeoutMs !== undefined,
      compaction: compact,
      stall: stallWatch !== undefined,
    });
    this.#budget = new Budget(budget ?? {}, { label: 'budget' });
    if (!Array.isArray(sharedBudgets) || !sharedBudgets.every((b) => b instanceof Budget)) {
      throw new InvalidArgumentError('sharedBudgets', 'an array of Budget', sharedBudgets);
    }
    if (this.#budget.strict) assertBoundsCalls(agent, 'budget.maxCostUsd');
    for (const [i, shared] of sharedBudgets.entries())
      if (shared.strict) assertBoundsCalls(agent, `sharedBudgets[${i}] (${shared.label}) maxCostUsd`);
    if (typeof ledger !== 'boolean') throw new InvalidArgumentError('ledger', 'true or false', ledger);
    if (ledgerDefaultMaxCostUsd !== undefined) assertNonNegative(ledgerDefaultMaxCostUsd, 'ledgerDefaultMaxCostUsd');
    if (!(Number.isSafeInteger(minOutputTokens) && minOutputTokens >= 1))
      throw new InvalidArgumentError('minOutputTokens', 'a positive integer', minOutputTokens);
    if (!Array.isArray(externalBudgets))
      throw new InvalidArgumentError(
        'externalBudgets',
        'an array of { reserve(kind), charge(delta) }',
        externalBudgets,
      );
    for (const [i, b] of (externalBudgets as unknown[]).entries()) {
      if (
        typeof b !== 'object' ||
        b === null ||
        typeof (b as ExternalBudget).reserve !== 'function' ||
        typeof (b as ExternalBudget).charge !== 'function'
      ) {
        throw new InvalidArgumentError(
          `externalBudgets[${i}]`,
          'an object with reserve(kind) and charge(delta) methods',
          b,
        );
      }
    }
    const resolvedRetry = resolveRetry(retry);
    assertNonNegative(cancelGraceMs, 'cancelGraceMs');
    if (!(toolConcurrency === Infinity || (Number.isInteger(toolConcurrency) && toolConcurrency >= 1))) {
      throw new InvalidArgumentError('toolConcurrency', 'a positive integer or Infinity', toolConcurrency);
    }
    if (pricing !== undefined && typeof pricing !== 'function')
      throw new InvalidArgumentError('pricing', 'a function (usage, { model }) => USD or undefined', pricing);
    if (!['error', 'warn', 'ignore'].includes(onUnknownCost as string))
      throw new InvalidArgumentError('onUnknownCost', "'error', 'warn' or 'ignore'", onUnknownCost);
    if (typeof sleep !== 'function')
      throw new InvalidArgumentError('sleep', 'a function (ms, signal) => Promise<void>', sleep);
    if (typeof random !== 'function') throw new InvalidArgumentError('random', 'a function returning [0, 1)', random);
    if (logger !== undefined && logger !== false && !isAgentLogger(logger)) {
      throw new InvalidArgumentError(
        'logger',
        'an object with error, warn, info and debug methods of (message, meta), or false',
        logger,
      );
    }
    const resolved: AgentLogger | undefined = logger === false ? undefined : (logger ?? getDefaultLogger());
    const journalOptions = resolveJournal(journal);
    const recording = resumeRecording(resumeFrom, typeof agent.acceptRecorded === 'function', toolConcurrency);
    this.machine = new StateMachine<StateName>({
      // Undefined takes the machine's default, as an absent option does.
      maxHistorySize,
      clock,
      sink,
      table: table as TransitionTable<StateName> | undefined,
      logger: resolved === undefined ? false : asMachineLogger(resolved),
    });
    if ((journalOptions !== undefined || ledger) && !this.machine.journals) {
      throw new InvalidArgumentError(
        'sink',
        `a sink that takes journal lines (an object with journal(entry), such as a JsonlHistorySink) when \`${journalOptions !== undefined ? 'journal' : 'ledger'}\` is on`,
        sink,
      );
    }
    const writer =
      journalOptions === undefined && !ledger
        ? undefined
        : journalWriter(this.machine as StateMachine<string>, journalOptions ?? {});
    this.#sharedBudgets = sharedBudgets;
    this.#clock = clock ?? Date.now;
    this.#logger = resolved;
    this.#budgets = [this.#budget, ...sharedBudgets];
    this.#settings = {
      machine: this.machine,
      agent,
      external: [...externalBudgets],
      shared: sharedBudgets,
      retry: resolvedRetry,
      cancelGraceMs,
      toolConcurrency,
      pricing,
      onUnknownCost,
      warned: { unknownCost: false },
      sleep,
      random,
      clock: this.#clock,
      logger: resolved,
      journal: journalThrough(stallWatch, journalOptions === undefined ? undefined : writer),
      stall: stallWatch,
      ledger: writer,
      ledgerDefaultMaxCostUsd,
      minOutputTokens,
      recording,
      approval: approve === undefined ? undefined : { policy: approve, timeoutMs: approvalTimeoutMs },
      compact: compact ? agent.compact!.bind(agent) : undefined,
      hears: (event) => this.#emitter.listenerCount(event) > 0,
      emit: (event, ...args) => this.#emit(event, ...args),
    };
    assertEndings(this.#settings, this.#budgets);
  }

  /** Usage over all turns so far. */
  get usage(): UsageTotals {
    return this.#budget.usage;
  }

  /** With `resumeFrom`: how this agent resumed (continued from the journal, or restarted), and what it served so far. */
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
    if (isStrictCap(limits)) assertBoundsCalls(this.#settings.agent, 'limits.maxCostUsd');
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
    if (isStrictCap(budget)) assertBoundsCalls(this.#settings.agent, 'options.budget.maxCostUsd');
    if (budget !== undefined) assertEndings(this.#settings, [new Budget(budget, { label: 'options.budget' })]);
    if (this.#active !== undefined) throw new TurnInProgressError(this.#turns, this.machine.current);

    // A turn's controller is kept for the next turn when it was never aborted: its turn
    // ended with no listener left on it (TurnRunner aborts it otherwise), and making an
    // AbortController costs microseconds on Node 20.
    const controller = this.#spare ?? new AbortController();
    this.#spare = undefined;
    this.#turns += 1;
    const turn = this.#turns;
    let budgets = this.#budgets;
    if (budget !== undefined && Object.values(budget).some((v) => v !== undefined))
      budgets = [...budgets, new Budget(budget, { label: 'turn budget' })];
    const stop = (this.#stop = deferred<TurnResult>());
    const runner = new TurnRunner(this.#settings, budgets, turn, controller, (gate, paused) => {
      this.#gate = gate;
      // The caller gets this stop now; the next one (`continueTurn()`) gets a promise of its own.
      const now = this.#stop;
      this.#stop = deferred<TurnResult>();
      now?.resolve(paused);
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

  /**
   * The result of the turn that last stopped for approval, once it stops again: it ended, or
   * it waits for the answers to a later response's calls (`awaiting_approval` again).
   * Throws when no turn has stopped for approval.
   */
  continueTurn(): Promise<TurnResult> {
    if (this.#stop === undefined)
      throw new InvalidArgumentError('continueTurn()', 'a turn that stopped with outcome awaiting_approval', undefined);
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

/**
 * The machine logs through winston's `log(level, …)` and `isLevelEnabled`; any other logger is
 * adapted to that, every level enabled (the logger filters), every call contained.
 */
export function asMachineLogger(logger: AgentLogger): Logger {
  // A batch makes one adapter per run, nearly always with the same logger: its shim is made once.
  let shim = shims.get(logger);
  if (shim === undefined) shims.set(logger, (shim = makeShim(logger)));
  return shim;
}

/** The machine-facing shim of each logger seen, for as long as the logger lives. */
const shims = new WeakMap<object, Logger>();

function makeShim(logger: AgentLogger): Logger {
  const l = logger as Partial<Logger>;
  const winstonLike =
    typeof l.log === 'function' && typeof l.isLevelEnabled === 'function' && typeof l.level === 'string';
  const write = (level: string, message: string, meta?: Record<string, unknown>): void => {
    if (winstonLike) {
      (logger as Logger).log(level, message, meta);
      return;
    }
    safeLog(logger, level === 'error' || level === 'warn' || level === 'info' ? level : 'debug', message, meta ?? {});
  };
  let shim: Logger;
  const methods = {
    isLevelEnabled: (level: string): boolean => (winstonLike ? (logger as Logger).isLevelEnabled(level) : true),
    log: (level: string, message: string, meta?: Record<string, unknown>) => (write(level, message, meta), shim),
    error: (m: string, meta?: Record<string, unknown>) => (write('error', m, meta), shim),
    warn: (m: string, meta?: Record<string, unknown>) => (write('warn', m, meta), shim),
    info: (m: string, meta?: Record<string, unknown>) => (write('info', m, meta), shim),
    debug: (m: string, meta?: Record<string, unknown>) => (write('debug', m, meta), shim),
  };
  // The machine reads the level on every move. Where the logger keeps it in a data property of
  // its own (winston does), the shim inherits it, so that reading it is a plain load and still
  // sees every change; otherwise a getter reads it. A level that cannot change (the default
  // logger's) the shim holds read-only too, so the machine reads it once.
  const own = winstonLike ? Object.getOwnPropertyDescriptor(logger, 'level') : undefined;
  if (!winstonLike) shim = { level: 'debug', ...methods } as unknown as Logger;
  else if (own !== undefined && 'value' in own)
    shim = Object.create(logger, {
      ...Object.getOwnPropertyDescriptors(methods),
      ...(levelIsFixed(logger) ? { level: own } : {}),
    }) as Logger;
  else {
    shim = {
      get level(): string {
        return (logger as Logger).level;
      },
      ...methods,
    } as unknown as Logger;
  }
  return shim;
}

function assertAgentLoop(agent: unknown): asserts agent is AgentLoop {
  if (typeof agent !== 'object' || agent === null) {
    throw new InvalidArgumentError('agent', `an object with ${REQUIRED.join(', ')}`, agent);
  }
  for (const name of REQUIRED) {
    const op = (agent as Record<string, unknown>)[name];
    if (typeof op !== 'function') throw new InvalidArgumentError(`agent.${name}`, 'a function (it is required)', op);
  }
  for (const name of OPTIONAL) {
    const op = (agent as Record<string, unknown>)[name];
    if (op !== undefined && typeof op !== 'function')
      throw new InvalidArgumentError(`agent.${name}`, 'a function or undefined', op);
  }
}

interface Deferred<T> {
  promise: Promise<T>;
  resolve: (value: T) => void;
}

function deferred<T>(): Deferred<T> {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

function assertNonNegative(value: unknown, name: string): asserts value is number {
  if (!(typeof value === 'number' && Number.isFinite(value) && value >= 0)) {
    throw new InvalidArgumentError(name, 'a non-negative finite number', value);
  }
}

export function resolveJournal(journal: unknown): JournalOptions | undefined {
  if (journal === false) return undefined;
  if (journal === true) return {};
  if (typeof journal === 'object' && journal !== null && !Array.isArray(journal)) {
    const { redact } = journal as JournalOptions;
    if (redact !== undefined && typeof redact !== 'function')
      throw new InvalidArgumentError('journal.redact', 'a function (entry) => entry', redact);
    return redact === undefined ? {} : { redact };
  }
  throw new InvalidArgumentError('journal', 'true, false or { redact? }', journal);
}

function resolveRetry(retry: unknown): ResolvedRetry {
  if (typeof retry !== 'object' || retry === null)
    throw new InvalidArgumentError(
      'retry',
      'an object { retries?, baseDelayMs?, maxDelayMs?, shouldRetry?, delayMs? }',
      retry,
    );
  const {
    retries = 2,
    baseDelayMs = 500,
    maxDelayMs = 30_000,
    shouldRetry = defaultShouldRetry,
    delayMs,
  } = retry as RetryOptions;
  if (!(Number.isInteger(retries) && retries >= 0))
    throw new InvalidArgumentError('retry.retries', 'a non-negative integer', retries);
  assertNonNegative(baseDelayMs, 'retry.baseDelayMs');
  assertNonNegative(maxDelayMs, 'retry.maxDelayMs');
  if (typeof shouldRetry !== 'function')
    throw new InvalidArgumentError('retry.shouldRetry', 'a function (error) => boolean', shouldRetry);
  if (delayMs !== undefined && typeof delayMs !== 'function')
    throw new InvalidArgumentError('retry.delayMs', 'a function (error, attempt) => ms or undefined', delayMs);
  return delayMs === undefined
    ? { retries, baseDelayMs, maxDelayMs, shouldRetry }
    : { retries, baseDelayMs, maxDelayMs, shouldRetry, delayMs };
}
