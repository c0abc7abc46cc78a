import { cutAtBoundOf } from './cutAtBound';
import { State, type StateName } from '../../states/StateName';
import type { StateMachine } from '../machine/StateMachine';
import type { ForcedLogLevel } from '../machine/TransitionRecord';
import type { AgentLogger } from './AgentLogger';
import type { LLMCallBound, LLMResponse, Pricing, Usage } from './AgentLoop';
import type { BoundExceeded } from './boundExceeded';
import type { Budget } from './Budget';
import type { SpentLimit } from './BudgetLimits';
import type { Attempt } from './LLMOutcome';
import { reserveLine } from './reserveLine';
import { chargeAttempt, UNREPORTED, type AttemptCharge, type AttemptEnd } from './chargeRule';
import { Deadline } from './Deadline';
import { endAttempt } from './endAttempt';
import { ExtensionState } from './extensionStates';
import { holdMirrorCall } from './holdMirrorCall';
import type { JournalEntry } from './JournalEntry';
import { writeAttemptLine, type AttemptFacts, type AttemptOutcome } from './mirrorAttemptLine';
import { mirrorRunResult, reportRunEnd } from './mirrorRunResult';
import { answerRest, refuseSlot, slotSummary, type MirrorSlot } from './MirrorSlot';
import {
  AGENT_READY,
  budgetHasRoom,
  CHECKING_CANCELLATION,
  llmResponded,
  NO_NEW_COMMITS,
  runningTools,
  sendingToolResults,
  sendingUserMessage,
  toolsFinished,
  toolsRequested,
  turnStarts,
} from './turnEvents';
import type { MirrorStop } from './MirrorStop';
import { abortReason, mirrorEndedError } from './mirrorStopReason';
import { NOTHING_RESERVED, type Reservation } from './reserveLLMCall';
import type { RunRecording } from './RunRecording';
import { budgetError, limitData } from './spentRecord';
import type { StallCheck, StallWatch } from './StallWatch';
import { LLMCallError, OperationError, TurnCancelledError, type TurnError } from './TurnError';
import { commitFailure } from './commitFailure';
import type { TurnOutcome } from './TurnOutcome';
import type { TurnResult } from './TurnResult';
import type { UsageMeter } from './UsageMeter';
import type { UsageDelta } from './UsageTotals';

const ONE_LLM_CALL = Object.freeze({ llmCalls: 1 });
/** Why a ledger line states no worst case, when the framework gave the call no bound. */
const NO_BOUND = 'the framework gave modelCallStart no bound for this call';
/** The states of a response's tool calls, from their request until their results are sent. */
export const TOOL_PHASE: ReadonlySet<string> = new Set([
  State.ToolUseRequested,
  State.CheckingForCancellation,
  State.RunningTool,
]);

/** How `gate` treats a call: `handOver` lets go of the hold it takes the place of; `wraps`: a cost refusal wraps up (`budget.wrapUp`). */
export interface GateHow {
  handOver?: () => void;
  wraps?: boolean;
}

/** What a mirror's moves need of the mirror: its budget, clock, writers and the running run's signal. */
export interface MirrorMovesDeps {
  budget: Budget;
  clock: () => number;
  journal: ((entry: JournalEntry) => void) | undefined;
  ledger: ((entry: JournalEntry) => PromiseLike<void> | undefined | void) | undefined;
  logger: AgentLogger | undefined;
  recording: RunRecording | undefined;
  pricing: Pricing | undefined;
  /** The running run's signal (a new one after a cancelled run). */
  signal: () => AbortSignal;
}

/**
 * The runs of a `StepMirror`, which owns it: the running run's state and the moves it makes on
 * the mirror's machine, with their records, journal lines and charges, as a turn of
 * `AgentWithStateMachine` makes them. The mirror's events decide which move comes next.
 */
export class MirrorMoves {
  turn = 0;
  meter: UsageMeter | undefined;
  moves = 0;
  /** The last run's result, once it has ended; undefined while one runs. */
  result: TurnResult | undefined;
  running = false;
  input = '';
  operation: 'sendUserMessage' | 'sendToolResults' = 'sendUserMessage';
  attempt = 0;
  attemptStartedAt = 0;
  /** What the model attempt in flight holds against strict (and external) dollar caps: released at its end. */
  held: Reservation = NOTHING_RESERVED;
  failures: Attempt[] = [];
  slots: MirrorSlot[] = [];
  /** Tool results not yet carried to the LLM by a response. */
  unsent = false;
  texts: string[] | undefined;
  lastText: string | undefined;
  /** The final call's hold (`budget.wrapUp`, a MirrorWrapUp), when the mirror keeps one: reset as a run begins, let go as it ends. */
  wrap: { begin(): void; release(meter: UsageMeter): void } | undefined;

  readonly #budget: Budget;
  readonly #clock: () => number;
  readonly #journal: ((entry: JournalEntry) => void) | undefined;
  readonly #ledger: ((entry: JournalEntry) => PromiseLike<void> | undefined | void) | undefined;
  readonly #logger: AgentLogger | undefined;
  readonly #recording: RunRecording | undefined;
  readonly #pricing: Pricing | undefined;
  readonly #signal: () => AbortSignal;

  constructor(
    readonly machine: StateMachine<StateName>,
    deps: MirrorMovesDeps,
  ) {
    this.#budget = deps.budget;
    this.#clock = deps.clock;
    this.#journal = deps.journal;
    this.#ledger = deps.ledger;
    this.#logger = deps.logger;
    this.#recording = deps.recording;
    this.#pricing = deps.pricing;
    this.#signal = deps.signal;
  }

  /** A run begins with `input`, its meter started (charged `earlier`, an earlier attempt's spend): the machine moves to WaitingForUserInput. */
  begin(input: string, meter: UsageMeter, earlier: UsageDelta | undefined): void {
    this.running = true;
    this.result = undefined;
    this.turn += 1;
    this.moves = 0;
    this.input = input;
    this.attempt = 0;
    this.failures = [];
    this.slots = [];
    this.unsent = false;
    this.texts = undefined;
    this.lastText = undefined;
    this.wrap?.begin();
    this.operation = 'sendUserMessage';
    this.meter = meter;
    this.meter.start();
    if (earlier !== undefined) this.meter.chargeOwn(earlier);
    const current = this.machine.pendingState;
    // The earlier attempt's spend goes in the first record, so a file cut off again still counts it.
    if (current === State.Ready)
      this.move(
        State.WaitingForUserInput,
        earlier === undefined
          ? AGENT_READY
          : { description: AGENT_READY, data: { resumed: true, usage: this.#budget.usage } },
      );
    else if (this.machine.table.states[current]?.isTerminal === true)
      this.move(State.WaitingForUserInput, turnStarts(this.turn));
    else if (current !== State.WaitingForUserInput)
      this.move(State.WaitingForUserInput, `a run started with the machine in ${current}, not between turns`, true);
  }

  /** WaitingForUserInput, before the run's first call: a cancellation (not a deadline) or a spent budget ends the run; else SendingToLLM. */
  firstCall(): MirrorStop | undefined {
    const signal = this.#signal();
    if (signal.aborted && !(signal.reason instanceof Deadline)) {
      const reason = abortReason(signal);
      const error = new TurnCancelledError(reason, State.WaitingForUserInput);
      return this.stop(State.Error, `cancelled before the turn started: ${reason}`, { reason }, 'cancelled', error);
    }
    const spent = this.meter!.spent();
    if (spent !== undefined)
      return this.stop(
        State.Error,
        `${spent.message}; no LLM call made`,
        limitData(spent),
        'budget_exceeded',
        budgetError(spent),
      );
    this.sendUserMessage();
    return undefined;
  }

  /** After a response's charge: whether the run ended, the response past its bound under a strict cap, or its cost unknowable. */
  endsOnCharge(passed: BoundExceeded | undefined, priceError: OperationError | undefined, usage: Usage): boolean {
    const meter = this.meter!;
    // Past its bound (the server ignores max tokens): no strict cap can be kept; the run and its budgets stop.
    // External budgets hear of it in the background (a framework's step cannot wait here).
    const tripped = passed !== undefined && meter.tripsOnBound ? meter.trip(passed) : undefined;
    if (tripped !== undefined) {
      this.end(
        State.Error,
        tripped.message,
        { ...limitData(tripped), operation: this.operation },
        'budget_exceeded',
        budgetError(tripped),
      );
      return true;
    }
    if (priceError === undefined) return false;
    this.end(State.Error, priceError.message, { operation: this.operation, responseUsage: usage }, 'error', priceError);
    return true;
  }

  /**
   * A response answered the attempt, charged and journaled: ProcessingLLMResponse, then its tool
   * calls requested (unless `stall` finds the run goes nowhere).
   */
  responded(
    response: LLMResponse,
    problems: readonly string[],
    unknownCost: string | undefined,
    stall: StallWatch | undefined,
  ): void {
    // The results sent with this call reached the LLM.
    this.unsent = false;
    const calls = response.toolCalls ?? [];
    this.move(
      State.ProcessingLLMResponse,
      llmResponded(
        this.attempt,
        this.failures,
        calls.length,
        response,
        problems,
        unknownCost,
        undefined,
        this.#budget.usage,
      ),
    );
    this.failures = [];
    this.lastText = response.text;
    if (calls.length === 0) return;
    if (response.text !== undefined && response.text !== '') (this.texts ??= []).push(response.text);
    this.slots = calls.map((call) => ({ call, status: 'pending', startedAt: 0, endedAt: 0 }));
    this.unsent = true;
    const stalled = stall?.check();
    if (stalled !== undefined) return this.stalled(stalled);
    this.move(State.ToolUseRequested, toolsRequested(calls));
    this.move(State.CheckingForCancellation, CHECKING_CANCELLATION);
  }

  /**
   * The checks before an attempt from a sending state, as the adapter's callLLM makes them: the
   * budgets, then the attempt's worst case held against strict caps (and external ones).
   */
  async gate(
    bound: LLMCallBound | undefined,
    whyNoBound: string | undefined,
    how: GateHow = {},
  ): Promise<MirrorStop | undefined | { wrap: SpentLimit }> {
    const meter = this.meter!;
    const from = this.machine.pendingState;
    if (this.#signal().aborted) return this.cancel(from, { failures: this.failures });
    // An earlier attempt whose end was never reported (a retry after an unreported failure) ended: its hold goes.
    this.endAttempt();
    // The hold this call takes the place of (the final call's reserve) goes just before its own is taken.
    how.handOver?.();
    // No await from the check to the hold: runs sharing a budget are counted one by one.
    const gate = holdMirrorCall(meter, this.#pricing, this.#ledger !== undefined, bound, whyNoBound);
    if (gate instanceof OperationError)
      return this.stop(State.Error, gate.message, { operation: this.operation }, 'error', gate);
    const { held } = gate;
    let spent: SpentLimit | OperationError | undefined = gate.spent;
    // Its worst case did not fit beside the final call's hold: the run wraps up instead, nothing held for it.
    if (how.wraps === true && spent?.limit === 'maxCostUsd' && spent.hold !== undefined && meter.strict)
      return { wrap: spent };
    if (spent === undefined && meter.hasExternal) {
      spent = await meter.reserve('llm', held.externalHold === undefined ? undefined : { costUsd: held.externalHold });
      if (spent !== undefined) meter.release(held.held, undefined);
    }
    if (!this.running) {
      if (spent === undefined) meter.release(held.held, held.externalHold);
      return mirrorEndedError(this.result, this.turn, this.machine.current);
    }
    if (spent instanceof OperationError)
      return this.stop(State.Error, spent.message, { operation: this.operation }, 'error', spent);
    if (spent !== undefined)
      return this.stop(
        State.Error,
        `${spent.message}; no further LLM call made`,
        { ...limitData(spent), failures: this.failures },
        'budget_exceeded',
        budgetError(spent),
      );
    this.held = held;
    meter.charge(ONE_LLM_CALL, false);
    this.attempt += 1;
    const commit = this.#ledger?.(
      reserveLine(this.turn, this.operation, this.attempt, this.#clock(), held, undefined, whyNoBound ?? NO_BOUND),
    );
    // A store's commit (a file sink keeps the line before it returns): no call leaves before its reserve line is kept.
    if (commit !== undefined && commit !== null) {
      const unkept = await commitFailure(commit);
      if (unkept !== undefined || !this.running) {
        // The request never left: its hold goes back.
        this.held = NOTHING_RESERVED;
        meter.release(held.held, held.externalHold);
        if (unkept === undefined) return mirrorEndedError(this.result, this.turn, this.machine.current);
        const error = new OperationError("the ledger's reserve line", unkept);
        return this.stop(State.Error, error.message, { operation: this.operation }, 'error', error);
      }
    }
    this.attemptStartedAt =
      meter.hasExternal || held !== NOTHING_RESERVED || commit !== undefined ? this.#clock() : meter.lastReading;
    return undefined;
  }

  /** The attempt in flight ended as `end` (by default unreported, so it may have left): charged by the rule (`endAttempt`). */
  endAttempt(end: AttemptEnd = UNREPORTED): AttemptCharge {
    const held = this.held;
    this.held = NOTHING_RESERVED;
    return held === NOTHING_RESERVED ? chargeAttempt(end, undefined) : endAttempt(this.meter!, held, end);
  }

  /** From the tool phase (or elsewhere, forced) to SendingToolResults, through the budget check. */
  toSendingResults(state: StateName, check = true): MirrorStop | undefined {
    if (TOOL_PHASE.has(state)) {
      this.closeTools(state);
      // `check` false: the call was made already (a response nobody announced), so the budget had no say.
      const spent = check ? this.meter!.spent() : undefined;
      if (spent !== undefined)
        return this.stop(State.BudgetExceeded, spent.message, limitData(spent), 'budget_exceeded', budgetError(spent));
      if (check && this.#signal().aborted) return this.cancel(State.CheckingBudget);
      this.move(State.GatheringAdditionalMessages, budgetHasRoom(this.#budget.usage));
      this.move(State.SendingToolResults, sendingToolResults(this.slots.length, 0));
    } else {
      // A further model call after a text-only response (or from anywhere else): forced, with the reason.
      this.move(
        State.SendingToolResults,
        { description: `the framework made another LLM call from ${state}`, logLevel: 'info' },
        true,
      );
    }
    this.operation = 'sendToolResults';
    this.attempt = 0;
    this.failures = [];
    return undefined;
  }

  /** ToolUseRequested / CheckingForCancellation / RunningTool → CheckingBudget, answering any call left unanswered. */
  closeTools(state: StateName): void {
    if (state === State.ToolUseRequested) this.move(State.CheckingForCancellation, CHECKING_CANCELLATION);
    if (state !== State.RunningTool) this.enterRunningTool();
    this.answerRest('not run: the framework did not run it', 'not_run');
    this.move(State.CheckingGitCommits, toolsFinished(slotSummary(this.slots)));
    this.move(State.CheckingBudget, NO_NEW_COMMITS);
  }

  /** WaitingForUserInput → SendingToLLM: the run's first call. */
  sendUserMessage(): void {
    this.move(State.SendingToLLM, sendingUserMessage(this.turn, this.input.length));
    this.operation = 'sendUserMessage';
    this.attempt = 0;
  }

  enterRunningTool(): void {
    this.move(State.RunningTool, runningTools(this.slots.map((s) => s.call)));
  }

  endCallFailed(error: unknown): TurnResult {
    this.endAttempt();
    const failures = this.failures;
    const cause = new LLMCallError(this.operation, failures, error);
    // A stream cut at its bound says so in the run's last record, as the adapter's does.
    const cut = cutAtBoundOf(error);
    const data = { operation: this.operation, failures, ...(cut && { cutAtBound: cut }) };
    return this.end(State.Error, cause.message, data, 'error', cause);
  }

  /** Cancellation (or a passed deadline) outside CheckingForCancellation: forced, logged at info, as the adapter does. */
  cancel(from: StateName, data: Record<string, unknown> = {}): MirrorStop {
    const deadline: unknown = this.#signal().reason;
    if (deadline instanceof Deadline) {
      const { spent } = deadline;
      const to = this.machine.canMoveTo(State.BudgetExceeded) ? State.BudgetExceeded : State.Error;
      const forced = to === State.BudgetExceeded ? false : !this.machine.canMoveTo(State.Error);
      return this.stop(
        to,
        `${spent.message} (deadline passed during ${from})`,
        { ...limitData(spent), ...data },
        'budget_exceeded',
        budgetError(spent),
        { forced },
      );
    }
    const reason = abortReason(this.#signal());
    return this.stop(
      State.Cancelled,
      `cancelled during ${from}: ${reason}`,
      { reason, ...data },
      'cancelled',
      new TurnCancelledError(reason, from),
      {
        forced: true,
        logLevel: 'info',
      },
    );
  }

  /** A stall detector fired (→ Stalled → StallStopped, outcome `stalled`) or threw (→ Error): the run ends. */
  stalled(stall: StallCheck): void {
    if (stall.kind === 'threw')
      return void this.end(State.Error, stall.error.message, { operation: 'stall detector' }, 'error', stall.error);
    this.move(ExtensionState.Stalled as StateName, stall.event);
    const error = stall.error!;
    this.end(
      ExtensionState.StallStopped as StateName,
      error.message,
      { detector: error.finding.detector },
      'stalled',
      error,
    );
  }

  /** Ends the run and hands back the error the framework's hook should throw. */
  stop(
    to: StateName,
    description: string,
    data: Record<string, unknown>,
    outcome: TurnOutcome,
    error: MirrorStop,
    how: { forced?: boolean; logLevel?: ForcedLogLevel } = {},
  ): MirrorStop {
    this.end(to, description, data, outcome, error, how);
    return error;
  }

  /** The move that ends the run: its record carries the outcome and the usage so far, as the adapter's does. */
  end(
    to: StateName,
    description: string,
    data: Record<string, unknown>,
    outcome: TurnOutcome,
    error?: TurnError,
    how: { forced?: boolean; logLevel?: ForcedLogLevel } = {},
  ): TurnResult {
    const meter = this.meter!;
    this.#recording?.stop();
    // A model attempt still in flight (abandoned by an abort) may be billed: charged at its hold.
    this.endAttempt();
    // A final call's reserve the run no longer needs goes back.
    this.wrap?.release(meter);
    meter.chargeWall();
    const unanswered = TOOL_PHASE.has(this.machine.pendingState) || this.unsent;
    const event = {
      description,
      data: { ...data, outcome, usage: this.#budget.usage },
      ...(how.logLevel === undefined ? {} : { logLevel: how.logLevel }),
    };
    this.move(to, event, how.forced === true);
    // After the run's last record, as the adapter answers them (settleUnanswered).
    if (unanswered) this.answerRest(`not run: ${error?.message ?? outcome}`, 'not_run');
    meter.stop();
    this.running = false;
    const result = mirrorRunResult(meter, {
      outcome,
      error,
      turn: this.turn,
      moves: this.moves,
      lastText: this.lastText,
      texts: this.texts,
      unsent: this.unsent,
      slots: this.slots,
    });
    this.result = result;
    reportRunEnd(meter, result, this.#logger);
    return result;
  }

  resultOf(value: MirrorStop | TurnResult, text?: string): TurnResult {
    const result = this.result!;
    if (value instanceof Error) return result;
    if (text !== undefined && result.outcome === 'end_of_turn') result.text = text;
    return result;
  }

  move(
    to: StateName,
    event: string | { description: string; data?: unknown; logLevel?: ForcedLogLevel },
    forced = false,
  ): void {
    if (forced) this.machine.forceTransition(to, event);
    else this.machine.transition(to, event);
    this.moves += 1;
  }

  /** A call refused at its start: answered, journaled, and the reason handed back. */
  refuse(slot: MirrorSlot, status: 'interrupted' | 'not_run', note: string, error: MirrorStop): MirrorStop {
    refuseSlot(slot, status, note, this.#clock(), this.#journal, this.turn);
    return error;
  }

  answerRest(note: string, status: 'interrupted' | 'not_run'): void {
    answerRest(this.slots, note, status, this.#clock, this.#journal, this.turn);
  }

  /** The attempt in flight, for its journal line. */
  attemptFacts(): AttemptFacts {
    return {
      turn: this.turn,
      operation: this.operation,
      attempt: this.attempt,
      startedAt: this.attemptStartedAt,
      input: this.input,
      slots: this.slots,
    };
  }

  attemptLine(endedAt: number, outcome: AttemptOutcome): void {
    writeAttemptLine({ journal: this.#journal, ledger: this.#ledger }, this.attemptFacts(), endedAt, outcome);
  }
}
