import { State, type StateName } from '../../states/StateName';
import { messageOf } from '../internal/messageOf';
import { getDefaultLogger } from '../machine/defaultLogger';
import { InvalidArgumentError } from '../machine/InvalidArgumentError';
import { StateMachine } from '../machine/StateMachine';
import type { AgentLogger } from './AgentLogger';
import type { LLMCallBound, ToolCall } from './AgentLoop';
import { asMachineLogger } from './options/asMachineLogger';
import { resolveJournal } from './journal/resolveJournal';
import { Budget } from './money/Budget';
import type { SpentLimit } from './BudgetLimits';
import { Deadline } from './money/Deadline';
import type { ExternalBudget } from './money/ExternalBudget';
import type { JournalEntry } from './journal/JournalEntry';
import { boundProblem } from './calls/reserveLLMCall';
import { OperationError } from './TurnError';
import type { TurnResult } from './TurnResult';
import { UsageMeter } from './money/UsageMeter';
import type { UsageDelta, UsageTotals } from './UsageTotals';
import { assertNonNegative } from './options/assertNonNegative';
import { assertKnownOptions } from '../machine/assertKnownOptions';
import { MIRROR_CANNOT, MIRROR_OPTION_KEYS } from './options/optionKeys';
import { outsideEndings, refuseEndings } from './endings/refuseEndings';
import { optionsForNewMirror } from './mirror/optionsForNewMirror';
import { assertNothingBeside, checkMirrorOptions } from './mirror/checkMirrorOptions';
import { endSlot, slotLine } from './mirror/MirrorSlot';
import { mirrorStall } from './mirror/mirrorStall';
import { mirrorWriters } from './mirror/mirrorWriters';
import { startMirrorTool } from './mirror/startMirrorTool';
import { abortMirrorRun, endMirrorRun } from './mirror/endMirrorRun';
import { serveMirrorTool } from './mirror/serveMirrorTool';
import { serveMirrorResponse } from './mirror/serveMirrorResponse';
import { takeMirrorResponse } from './mirror/takeMirrorResponse';
import { failMirrorCall } from './mirror/failMirrorCall';
import { enterMirrorCall } from './mirror/enterMirrorCall';
import { gateMirrorCall } from './mirror/gateMirrorCall';
import { MirrorMoves, TOOL_PHASE } from './mirror/MirrorMoves';
import { mirrorEndedError } from './mirror/mirrorStopReason';
import type { TransitionTable } from '../machine/TransitionTable';
import { resumeRecording, type ResumeInfo, type RunRecording } from './journal/RunRecording';
import type { StepMirrorOptions } from './mirror/StepMirrorOptions';
import type { MirrorStop } from './mirror/MirrorStop';
import { billingRules, type BillingRule } from './money/providerBilling';
import type { MirrorBoundOf, MirrorCallFlags } from './mirror/MirrorCallFlags';
import { gatePlainCall } from './mirror/MirrorWrapUp';
import { checkedBoundOf, endingAsked, mirrorEndings, type MirrorIntegration } from './mirror/mirrorEndings';
import { approvalTable, ENDED_WAITING, MirrorApprovals, mirrorApprovalsOn } from './mirror/MirrorApprovals';
import type { MirrorResponse, MirrorToolOutcome } from './mirror/MirrorOutcomes';
import { mirrorTool, type MirroredTool, type RecordedToolAnswer } from './mirror/mirrorTool';
import { mirrorModel, type MirroredModelCall } from './mirror/mirrorModel';
import { mirrorModelStream, type MirroredModelStream } from './mirror/mirrorModelStream';

export type { StepMirrorOptions } from './mirror/StepMirrorOptions';
export type { MirrorBoundOf, MirrorCallFlags } from './mirror/MirrorCallFlags';

/**
 * Mirrors a loop that a framework owns (the AI SDK's `generateText`, an Agents SDK `run()`, a
 * LangGraph agent) into the sixteen states: feed it the loop's step events and it makes the
 * moves a turn of `AgentWithStateMachine` would, on its own `machine`, with the same history
 * records, journal lines, budgets and outcomes. One framework run is one turn.
 *
 * The events, in the order a loop makes them (a framework's hooks call these):
 * - `runStart(input)` — the run begins (WaitingForUserInput);
 * - `await model(call)` — a model call, the one step an integration needs: served from the
 *   journal, or gated (its worst case held against a strict cap), sent and charged (a streamed
 *   one: `await modelStream(call)`, its parts read as they pass). A loop that
 *   reports a call's two ends apart calls `await modelCallStart(bound?)` before each attempt,
 *   retries included (a returned `MirrorStop` means "do not call": throw it), then
 *   `modelCallFailed(error, { willRetry })` or `modelResponse(response)`;
 * - `await tool(call, run)` — a tool call: served, or gated, run and recorded (its two ends
 *   apart: `await toolStart(call)`, then `toolEnd(callId, outcome)`);
 * - `stepEnd()` — optional;
 * - `runEnd({ text })`, `runAborted(reason)`, `runFailed(error)` — how the run ended.
 * End events return the run's `TurnResult`; later end events of the same run return it again.
 *
 * Where the framework's order has no edge in the table (it ran a tool nobody asked for, it
 * stopped its loop after tools without another model call, it was cancelled mid-tool), the move
 * is forced with the reason. Budgets are checked where a framework lets code act — before each
 * model call and each tool call — by the same `UsageMeter` as the adapter's, so in-process and
 * external budgets, wall time and deadlines behave as they do there. `signal` is the mirror's
 * own: pass it to the framework as its abort signal; `cancel()`, a passed `maxWallMs` and
 * `options.signal` abort it.
 */
export class StepMirror {
  /** The machine the runs move: its history, events and current state. */
  readonly machine: StateMachine<StateName>;
  readonly #budget: Budget;
  /** Charged to the first run at its start, then gone. */
  #earlierSpend: UsageDelta | undefined;
  /** With `resumeFrom`: what the first run serves. */
  readonly #recording: RunRecording | undefined;
  readonly #budgets: readonly Budget[];
  readonly #external: readonly ExternalBudget[];
  readonly #clock: () => number;
  readonly #journal: ((entry: JournalEntry) => void) | undefined;
  /** Writes the ledger's lines (the journal's writer, or one of its own without the journal). */
  readonly #ledger: ((entry: JournalEntry) => PromiseLike<void> | undefined | void) | undefined;
  readonly #callerSignal: AbortSignal | undefined;
  /** Which failed requests are not billed (`billing`). */
  readonly #billing: readonly BillingRule[];
  #controller = new AbortController();
  /** The runs' state and the moves they make. */
  readonly #run: MirrorMoves;
  /** The framework's own approval waits (`approvals: true`). */
  readonly #approvals: MirrorApprovals;

  /**
   * The mirror an integration drives: the one handed to it as `mirror` (nothing else may be
   * given beside it, since that mirror's options were fixed when it was made), else a new one
   * made of the options. `where` names the integration in errors.
   */
  static fromOptions(
    options: StepMirrorOptions & { mirror?: StepMirror },
    where: string,
    integration: MirrorIntegration = {},
  ): StepMirror {
    const { mirror, ...rest } = options;
    if (mirror === undefined) return new StepMirror(optionsForNewMirror(rest, where, integration));
    if (!(mirror instanceof StepMirror)) throw new InvalidArgumentError('mirror', 'a StepMirror', mirror);
    assertNothingBeside(rest, where);
    // A mirror made before its integration was known (a batch's): its budgets' endings must be ones this integration makes.
    const cannot = { ...MIRROR_CANNOT, ...integration.cannot };
    refuseEndings([...mirror.#budgets, ...outsideEndings(mirror.#external)], cannot, where, integration.honours);
    return mirror;
  }

  constructor(options: StepMirrorOptions = {}) {
    if (typeof options !== 'object' || options === null)
      throw new InvalidArgumentError('options', 'an object', options);
    assertKnownOptions(options, MIRROR_OPTION_KEYS, 'new StepMirror()', MIRROR_CANNOT);
    const {
      budget,
      sharedBudgets = [],
      externalBudgets = [],
      pricing,
      billing,
      journal = false,
      signal,
      earlierSpend,
      resumeFrom,
      resumeTools,
      ledger,
      ledgerDefaultMaxCostUsd,
      logger,
      stall,
      approvals: approvalsGiven,
      approve,
      approvalTimeoutMs,
      honours = {},
      singleRun = false,
      ...machineOptions
    } = options;
    const stalls = mirrorStall(stall);
    const { onUnknownCost } = checkMirrorOptions(options);
    const approvals = mirrorApprovalsOn(approvalsGiven, approve, approvalTimeoutMs);
    const own = new Budget(budget ?? {}, { label: 'budget' });
    const budgets = [own, ...sharedBudgets];
    const ending = mirrorEndings(budgets, externalBudgets, pricing, honours, approvalTable(approvals, stalls?.table));
    const resolved: AgentLogger | undefined = logger === false ? undefined : (logger ?? getDefaultLogger());
    const journalOptions = resolveJournal(journal);
    this.machine = new StateMachine<StateName>({
      ...machineOptions,
      ...(ending.table === undefined ? {} : { table: ending.table as TransitionTable<StateName> }),
      logger: resolved === undefined ? false : asMachineLogger(resolved),
    });
    const writers = mirrorWriters(this.machine, journalOptions, ledger === true, stalls?.watch, machineOptions.sink);
    this.#journal = writers.journal;
    this.#ledger = writers.ledger;
    this.#budget = own;
    this.#budgets = budgets;
    this.#external = [...externalBudgets];
    // A framework runs a response's tool calls as many at once as it chooses: any unrecorded one may have been running.
    this.#recording = resumeRecording(resumeFrom, true, Infinity, resumeTools);
    // The earlier spend counts from the first record (a cut file keeps it): served answers are charged only without `usage`.
    this.#earlierSpend = earlierSpend ?? resumeFrom?.usage;
    this.#clock = machineOptions.clock ?? Date.now;
    this.#callerSignal = signal;
    this.#billing = billingRules(billing);
    this.#run = new MirrorMoves(
      this.machine,
      {
        budget: this.#budget,
        clock: this.#clock,
        journal: this.#journal,
        ledger: this.#ledger,
        ledgerDefaultMaxCostUsd,
        logger: resolved,
        recording: this.#recording,
        pricing,
        onUnknownCost,
        chargesServed: resumeFrom !== undefined && resumeFrom.usage === undefined,
        stall: stalls?.watch,
        signal: () => this.#controller.signal,
        singleRun,
      },
      // The final call's hold and the budget note, when a budget asks for them (and the integration honours them).
      ending.wrap,
    );
    const { journal: earlier } = resumeFrom ?? {};
    this.#approvals = new MirrorApprovals(approvals, this.#recording, earlier, this.#run, approvalTimeoutMs, approve);
    if (signal !== undefined) {
      if (signal.aborted) this.#controller.abort(signal.reason);
      else signal.addEventListener('abort', () => this.#controller.abort(signal.reason), { once: true });
    }
  }

  /** With `resumeFrom`: how the first run resumed, and what it served so far. */
  get resumed(): ResumeInfo | undefined {
    return this.#recording?.info;
  }

  /** The abort signal of the running run (or of the next one): give it to the framework. */
  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  /** The mirror's usage over all its runs. */
  get usage(): UsageTotals {
    return this.#budget.usage;
  }

  /** The running run's usage so far (the last run's, once it ended). */
  get runUsage(): UsageTotals {
    return this.#run.meter?.usage ?? this.#budget.usage;
  }

  /**
   * Whether each call's bound is needed (a framework's wrapper computes it only then): a strict
   * `maxCostUsd` requires it; an external dollar cap, the ledger, pricing (a call back without
   * usage, or cut at its bound, is charged at its worst case: never $0) and `wrapUp` use it.
   */
  get needsBound(): boolean {
    return (
      this.#ledger !== undefined ||
      this.#run.deps.pricing !== undefined ||
      this.#run.wrap?.wrapsUp === true ||
      this.#budgets.some((b) => b.strict) ||
      this.#external.some((b) => b.capsCost === true)
    );
  }

  /** Whether a run is in progress. */
  get running(): boolean {
    return this.#run.running;
  }

  /** 1 for the first run. */
  get turn(): number {
    return this.#run.turn;
  }

  /** The last run's result, once it has ended. */
  get result(): TurnResult | undefined {
    return this.#run.result;
  }

  /**
   * The limit spent now, if any (wall time charged first): a framework's stop condition asks
   * this after each step, so that its loop ends its own way with every tool call answered.
   * Undefined once the run has ended: no time is charged after its end (its result says why).
   */
  spent(): SpentLimit | undefined {
    return this.#run.running ? this.#run.meter?.spent() : undefined;
  }

  /** Cancels the running run: the signal aborts, no further call is allowed, and the run ends as `cancelled`. */
  cancel(reason = 'cancelled by the caller'): boolean {
    if (typeof reason !== 'string') throw new InvalidArgumentError('reason', 'a string', reason);
    if (this.#controller.signal.aborted) return false;
    this.#controller.abort(reason);
    return true;
  }

  /**
   * A run begins with the user's `input`: the machine moves to WaitingForUserInput and the wall
   * time starts. Called again before the run's first model call, it only sets the input.
   */
  runStart(input = ''): void {
    if (typeof input !== 'string') throw new InvalidArgumentError('input', 'a string (the user message)', input);
    if (this.#run.running && this.machine.pendingState === State.WaitingForUserInput) {
      // Started already (by a batch, before the framework's own start event): the same run.
      if (input !== '') this.#run.input = input;
      return;
    }
    if (this.#run.running) this.runFailed(new Error('a new run started before this one reported its end'));
    this.#approvals.newRun();
    // A controller that aborted ended its run; the next run gets a fresh one unless the caller's signal aborted.
    if (this.#controller.signal.aborted && this.#callerSignal?.aborted !== true)
      this.#controller = new AbortController();
    const controller = this.#controller;
    const meter = new UsageMeter({
      budgets: this.#budgets,
      shared: this.#budgets.slice(1),
      external: this.#external,
      clock: this.#clock,
      billing: this.#billing,
      onDeadline: (spent: SpentLimit) => controller.abort(new Deadline(spent)),
    });
    const earlier = this.#earlierSpend;
    this.#earlierSpend = undefined;
    this.#run.begin(input, meter, earlier);
  }

  /**
   * Before each model attempt (the first, the next after tools, each retry): resolves to
   * undefined to go ahead, or to why the run stops (it has then ended, legally). `bound`, the
   * request's `{ inputTokens, maxOutputTokens, model? }` as an `llmCallBound` gives it, is
   * required under a strict `maxCostUsd`: the worst case is held (and given to external budgets'
   * `reserve` when they cap dollars), then charged by the rule when the attempt's end is reported;
   * one that does not fit refuses the call (`budget_exceeded`), and a strict cap without a bound
   * or a price refuses it in Error (saying `whyNoBound`, when given).
   */
  async modelCallStart(bound?: LLMCallBound, whyNoBound?: string): Promise<MirrorStop | undefined> {
    if (bound !== undefined) {
      const problem = boundProblem(bound);
      if (problem !== undefined)
        throw new InvalidArgumentError('bound', `{ inputTokens, maxOutputTokens, model? } (${problem})`, bound);
    }
    if (this.#run.wrap !== undefined) {
      const [key, value] = endingAsked([...this.#budgets, ...outsideEndings(this.#external)]);
      throw new InvalidArgumentError(
        key,
        'left out of a mirror whose model calls come through modelCallStart(): such a call is made as the framework built it, so no final call or budget note can go with it (an integration that honours them calls modelCallPlan(boundOf))',
        value,
      );
    }
    const entered = enterMirrorCall(this.#run, this);
    if (entered !== undefined) return entered;
    return gateMirrorCall(this.#run, bound, whyNoBound) as Promise<MirrorStop | undefined>;
  }

  /**
   * Before each model attempt, from an integration that honours `budget.wrapUp` or
   * `budget.visible` (its `MirrorIntegration.honours`): as `modelCallStart`, with `boundOf(flags)`
   * bounding the call as it would be sent with the given flags. Resolves to why the run stops
   * (it has ended), or to the flags the call must carry: `budgetNote`, added to the request;
   * `wrapUp`, the final call — no tool to call, the instruction added last, `withheld` replacing
   * the results it carries when they would not fit, `withoutLastRound` leaving the last round out
   * when not even that fits. The run then ends with its answer
   * (`wrapped_up`) when `modelResponse` reports it.
   */
  async modelCallPlan(boundOf: MirrorBoundOf): Promise<MirrorStop | MirrorCallFlags> {
    if (typeof boundOf !== 'function')
      throw new InvalidArgumentError(
        'boundOf',
        'a function (flags) => the bound of the call, or why it has none',
        boundOf,
      );
    const entered = enterMirrorCall(this.#run, this);
    if (entered !== undefined) return entered;
    const checked = checkedBoundOf(boundOf);
    const wrap = this.#run.wrap;
    if (wrap !== undefined) return wrap.plan(this.#run, checked, this.needsBound);
    return gatePlainCall(this.#run, checked, this.needsBound, {});
  }

  /**
   * With `resumeFrom`, before a model call: the journaled response of this call, reported (no
   * request, no hold, charged to the own budget alone) — give it to the framework. Undefined:
   * make the call live (`modelCallStart`). `again`: the number of a call of this run (`callsAnswered`)
   * the framework makes again (a LangGraph node re-run on a continuation): its line's response, unreported.
   */
  recordedResponse(options?: { again?: number }): MirrorResponse | undefined {
    return serveMirrorResponse(this.#run, options?.again);
  }

  /** How many model calls of the running run were answered (live or served), each an `llm` journal line: the last one's number. */
  get callsAnswered(): number {
    return this.#run.responses.length;
  }

  /**
   * With `resumeFrom`, before a tool call of a served response: its recorded (or `interrupted`)
   * result, by the `resumeTools` policy, the tool not run; undefined: run it (`toolStart`).
   */
  recordedTool(call: ToolCall): RecordedToolAnswer | undefined {
    if (this.#recording === undefined || !this.#run.running || this.signal.aborted) return undefined;
    return serveMirrorTool(this.#run, this.#recording, call, this.#run.deps);
  }

  /**
   * A model attempt failed. `willRetry: false` ends the run in Error; true or unknown waits for a
   * retry or the run's end. `delayMs`: the framework's wait before the retry, kept in the record.
   */
  modelCallFailed(error: unknown, info: { willRetry?: boolean; delayMs?: number } = {}): void {
    if (info.delayMs !== undefined) assertNonNegative(info.delayMs, 'modelCallFailed(error, { delayMs })');
    if (this.#run.running) failMirrorCall(this.#run, error, info);
  }

  /** A model attempt answered: charged, priced, journaled; returns why its tools must not run (an uncarried `approve`). */
  modelResponse(response: MirrorResponse): MirrorStop | undefined {
    if (!this.#run.running) return undefined;
    takeMirrorResponse(this.#run, response);
    const uncarried = this.#approvals.uncarried(response.toolCalls);
    return uncarried === undefined ? undefined : this.#run.stop(this.runFailed(uncarried));
  }

  /**
   * Before a tool call runs: resolves to undefined to run it, or to why it must not (a spent
   * budget, a cancelled run, an `approve` policy the framework did not ask; this ends the run).
   * A refused call is answered `not run: …` (or `interrupted: …`); the framework's hook throws
   * the returned error, so the LLM sees the refusal as the call's result, or stops its loop.
   */
  async toolStart(call: ToolCall): Promise<MirrorStop | undefined> {
    if (!this.#run.running) return mirrorEndedError(this.#run.result, this.#run.turn, this.machine.current);
    if (typeof call !== 'object' || call === null || typeof call.id !== 'string' || typeof call.name !== 'string')
      throw new InvalidArgumentError('call', 'a tool call { id: string, name: string, input? }', call);
    const unasked = this.#approvals.unasked(call);
    if (unasked !== undefined) return this.#run.stop(this.runFailed(unasked));
    return startMirrorTool(this.#run, call, this.signal, this.#clock);
  }

  /** A tool call finished (`{ output, isError? }`) or threw (`{ error }`). */
  toolEnd(callId: string, outcome: MirrorToolOutcome): void {
    const slot = this.#run.slots.find((s) => s.call.id === callId);
    if (slot === undefined || (slot.status !== 'running' && slot.status !== 'pending')) return;
    endSlot(slot, outcome, this.#clock(), this.signal);
    this.#journal?.(slotLine(this.#run.turn, slot));
  }

  /**
   * A model call of the framework, the one step an integration needs for it: a resumed run's
   * journaled response is served (`call.served`), else the call is gated, sent (`call.send`),
   * and its answer charged (`call.read`) or its failure reported. Resolves to the answer.
   */
  model<R>(call: MirroredModelCall<R>): Promise<R> {
    return mirrorModel(this, call);
  }

  /** A streamed model call of the framework: as `model`, each part read as it passes (`call.read`), charged once whole. */
  modelStream<R, P>(call: MirroredModelStream<R, P>): Promise<R> {
    return mirrorModelStream(this, call);
  }

  /**
   * A tool call of the framework, the one step an integration needs for it: a resumed run's
   * recorded result is served (`how.served`), else the call is gated (`how.refuse`; by default
   * the reason is thrown), `run` runs it, and how it ended is recorded. Resolves to its value.
   */
  tool<T>(call: ToolCall, run: () => T | Promise<T>, how?: MirroredTool<T>): Promise<T> {
    return mirrorTool(this, call, run, how);
  }

  /** A step of the framework's loop ended. Optional: the moves do not need it. */
  stepEnd(): void {}

  /**
   * The framework's loop ended on its own. After a text-only response the run ends in
   * EndOfTurn; after tools with no further model call (the loop's stop condition), in
   * BudgetExceeded when a budget is spent, else in EndOfTurn, forced with the reason.
   */
  runEnd(info: { text?: string } = {}): TurnResult {
    if (!this.#run.running) return this.#run.result ?? this.#fail(new Error('the run ended before it started'));
    const state = this.machine.pendingState;
    if (this.#approvals.waiting) return this.#fail(new Error(ENDED_WAITING));
    // Stopped because it was cancelled while its tools ran: the run ends there, as the adapter's does.
    if (TOOL_PHASE.has(state) && this.signal.aborted) return this.runAborted();
    if (state === State.ProcessingLLMResponse || TOOL_PHASE.has(state))
      return endMirrorRun(this.#run, state, info.text ?? this.#run.lastText, this.signal);
    return this.#fail(new Error(`the framework's loop ended in ${state} without a response to end on`));
  }

  /** The framework's loop stopped for an abort: the run ends as `cancelled` (or `budget_exceeded` at a deadline). */
  runAborted(reason?: unknown): TurnResult {
    if (!this.#run.running) return this.#run.result ?? this.#fail(new Error('the run was aborted before it started'));
    if (!this.signal.aborted) this.#controller.abort(reason ?? 'the framework aborted its loop');
    const result = abortMirrorRun(this.#run, this.signal);
    this.#approvals.ended();
    return result;
  }

  /** The framework's loop failed with `error`: the run ends in Error (or as cancelled, when it was aborted). */
  runFailed(error: unknown): TurnResult {
    if (!this.#run.running) return this.#run.result ?? this.#fail(error);
    if (this.signal.aborted) return this.runAborted();
    const state = this.machine.pendingState;
    if (state === State.SendingToLLM || state === State.SendingToolResults)
      return this.#run.resultOf(this.#run.endCallFailed(error));
    return this.#fail(error);
  }

  #fail(error: unknown): TurnResult {
    if (!this.#run.running) this.runStart();
    const cause = error instanceof OperationError ? error : new OperationError('the framework loop', error);
    if (TOOL_PHASE.has(this.machine.pendingState)) this.#run.answerRest(`not run: ${cause.message}`, 'not_run');
    const result = this.#run.failed(cause, { error: messageOf(error) });
    this.#approvals.ended();
    return result;
  }

  /** The loop stopped for answers to `calls` (needs `approvals`): AwaitingApproval until answered, cancelled or timed out. */
  awaitApproval(calls: ToolCall[]): TurnResult {
    return this.#approvals.park(calls, this.machine.pendingState, this.signal, () => this.runAborted());
  }

  /** The run's approval waits (`waiting`, `pending`, `approve`, `deny`, `answers()`, `listen`) and its policy. */
  get approvals(): MirrorApprovals {
    return this.#approvals;
  }
}
