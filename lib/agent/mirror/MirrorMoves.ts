import { cutAtBoundOf } from '../money/cutAtBound';
import { State, type StateName } from '../../../states/StateName';
import type { StateMachine } from '../../machine/StateMachine';
import type { LLMResponse } from '../AgentLoop';
import type { BoundExceeded } from '../boundExceeded';
import type { Budget } from '../money/Budget';
import type { Attempt } from '../turn/LLMOutcome';
import { chargeAttempt, UNREPORTED, type AttemptCharge, type AttemptEnd } from '../money/chargeRule';
import { endAttempt } from '../calls/endAttempt';
import type { JournalEntry } from '../journal/JournalEntry';
import type { ChargePolicy, ResponseToCharge } from '../calls/chargeResponse';
import type { RunRecording } from '../journal/RunRecording';
import { mirrorLlmLine, type AttemptFacts } from './mirrorAttemptLine';
import { writeAttemptLine } from '../calls/writeAttemptLine';
import type { AttemptEndLine } from '../journal/JournalEntry';
import { reportRunEnd } from './reportRunEnd';
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
  type MoveEvent,
} from '../turn/turnEvents';
import type { MirrorStop } from './MirrorStop';
import type { MirrorBoundOf, MirrorCallFlags } from './MirrorCallFlags';
import { NOTHING_RESERVED, type Reservation } from '../calls/reserveLLMCall';
import type { StallWatch } from '../stall/StallWatch';
import { LLMCallError } from '../TurnError';
import { FORCED, TurnCore, type EndExtra } from '../turn/TurnCore';
import type { TurnOutcome } from '../TurnOutcome';
import type { TurnResult } from '../TurnResult';
import type { UsageMeter } from '../money/UsageMeter';
import type { UsageDelta, UsageTotals } from '../UsageTotals';

/** The states of a response's tool calls, from their request until their results are sent. */
export const TOOL_PHASE: ReadonlySet<string> = new Set([
  State.ToolUseRequested,
  State.CheckingForCancellation,
  State.RunningTool,
]);

/**
 * A run's final-call hold and budget note (`budget.wrapUp`, `budget.visible`: a `MirrorWrapUp`):
 * it plans each model call, is reset as a run begins, and lets go of its hold as the run ends.
 */
export interface RunEndings {
  /** Whether a budget asks for the final call, not only the note. */
  readonly wrapsUp: boolean;
  begin(): void;
  release(meter: UsageMeter): void;
  plan(run: MirrorMoves, boundOf: MirrorBoundOf, needsBound: boolean): Promise<MirrorStop | MirrorCallFlags>;
}

/** What a mirror's moves need of the mirror: its budget, clock, writers and the running run's signal. */
export interface MirrorMovesDeps extends ChargePolicy {
  /** With `resumeFrom`: what serves recorded responses, and whether served ones are charged (no earlier usage given). */
  recording: RunRecording | undefined;
  chargesServed: boolean;
  budget: Budget;
  clock: () => number;
  journal: ((entry: JournalEntry) => void) | undefined;
  ledger: ((entry: JournalEntry) => PromiseLike<void> | undefined | void) | undefined;
  /** The reservation a ledger line states when a call's worst case is unknown (`ledgerDefaultMaxCostUsd`). */
  ledgerDefaultMaxCostUsd: number | undefined;
  stall: StallWatch | undefined;
  /** The running run's signal (a new one after a cancelled run). */
  signal: () => AbortSignal;
  /** The mirror mirrors one run (`singleRun`): a model call after its end is refused, not a new run. */
  singleRun: boolean;
}

/**
 * The runs of a `StepMirror`, which owns it: the running run's state and the moves it makes on
 * the mirror's machine, with their records, journal lines and charges, as a turn of
 * `AgentWithStateMachine` makes them. The mirror's events decide which move comes next.
 */
export class MirrorMoves extends TurnCore {
  meter: UsageMeter | undefined;
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
  lastText: string | undefined;
  /** With `resumeFrom`: the response about to be reported was served from the journal, at this cost. */
  served: { costUsd: number | undefined } | undefined;
  /** The running run's responses as its `llm` journal lines hold them, in order (live and served). */
  responses: LLMResponse[] = [];
  /** Whether an unknown cost was warned of: once per mirror. */
  warnedUnknownCost = false;
  /** Set as the run ends: whether tool calls were left that no response carried (answered after the last record). */
  #unanswered = false;

  /**
   * @param wrap The final call's hold and the budget note (`budget.wrapUp`, `budget.visible`),
   * when the mirror keeps them: reset as a run begins, let go as it ends.
   */
  constructor(
    machine: StateMachine<StateName>,
    readonly deps: MirrorMovesDeps,
    readonly wrap: RunEndings | undefined,
  ) {
    super(machine, 0, false);
  }

  protected runSignal(): AbortSignal {
    return this.deps.signal();
  }

  protected runMeter(): UsageMeter {
    return this.meter!;
  }

  protected ownUsage(): UsageTotals {
    return this.deps.budget.usage;
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
    this.responses = [];
    this.unsent = false;
    this.texts = undefined;
    this.lastText = undefined;
    this.wrap?.begin();
    this.operation = 'sendUserMessage';
    this.meter = meter;
    this.meter.start();
    if (earlier !== undefined) this.meter.chargeOwn(earlier);
    // The earlier attempt's spend goes in the first record, so a file cut off again still counts it.
    this.enter(
      this.machine.pendingState,
      earlier === undefined
        ? undefined
        : { description: AGENT_READY, data: { resumed: true, usage: this.deps.budget.usage } },
    );
  }

  /** WaitingForUserInput, before the run's first call: a cancellation (not a deadline) or a spent budget ends the run; else SendingToLLM. */
  firstCall(): MirrorStop | undefined {
    const refused = this.refuseStart(this.meter!.spent());
    if (refused !== undefined) return this.stop(refused);
    this.sendUserMessage();
    return undefined;
  }

  /** A response past its bound under a strict cap (`afterCharge`): the run and every budget it shares stop. */
  trip(passed: BoundExceeded): void {
    // External budgets hear of it in the background (a framework's step cannot wait here).
    const tripped = this.meter!.trip(passed);
    // As the adapter records it (TurnMoves): the call's failures, and that no further call is made.
    this.overBudget(State.Error, tripped, { failures: this.failures }, '; no further LLM call made');
  }

  /**
   * A response answered the attempt, charged and journaled: ProcessingLLMResponse, then its tool
   * calls requested (unless the stall watch finds the run goes nowhere).
   */
  responded(response: LLMResponse, problems: readonly string[], unknownCost: string | undefined): void {
    this.move(State.ProcessingLLMResponse, this.took(response, problems, unknownCost));
    const calls = response.toolCalls ?? [];
    if (calls.length === 0) return;
    const stalled = this.deps.stall?.check();
    if (stalled !== undefined) return void this.stalled(stalled);
    this.move(State.ToolUseRequested, toolsRequested(calls));
    this.move(State.CheckingForCancellation, CHECKING_CANCELLATION);
  }

  /**
   * What the run keeps of a response, any response (the final call's too): its text, its tool
   * calls (pending, their results not yet sent), and the record of its arrival.
   */
  took(response: LLMResponse, problems: readonly string[], unknownCost: string | undefined): MoveEvent {
    const calls = response.toolCalls ?? [];
    const record = llmResponded(
      this.attempt,
      this.failures,
      calls.length,
      response,
      problems,
      unknownCost,
      undefined,
      this.deps.budget.usage,
    );
    this.failures = [];
    this.lastText = response.text;
    // The results sent with this call reached the LLM; its own calls' are not sent yet.
    this.unsent = calls.length > 0;
    if (calls.length === 0) return record;
    if (response.text !== undefined && response.text !== '') (this.texts ??= []).push(response.text);
    this.slots = calls.map((call) => ({ call, status: 'pending', startedAt: 0, endedAt: 0 }));
    return record;
  }

  /** The attempt in flight's hold, taken to charge its end against it (`chargeResponse`, `chargeFailure`). */
  takeHold(): Omit<ResponseToCharge, 'value'> {
    const held = this.held;
    this.held = NOTHING_RESERVED;
    const boundBy = 'the bound given to modelCallStart';
    return { meter: this.meter!, held, operation: this.operation, turn: this.turn, boundBy, policy: this.deps };
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
      if (spent !== undefined) return this.stop(this.overBudget(State.BudgetExceeded, spent));
      if (check && this.deps.signal().aborted) return this.stop(this.cancel(State.CheckingBudget));
      this.move(State.GatheringAdditionalMessages, budgetHasRoom(this.deps.budget.usage));
      this.move(State.SendingToolResults, sendingToolResults(this.slots.length, 0));
    } else {
      // A further model call after a text-only response (or from anywhere else): forced, with the reason.
      this.move(
        State.SendingToolResults,
        { description: `the framework made another LLM call from ${state}`, logLevel: 'info' },
        FORCED,
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
    return this.failed(cause, data);
  }

  /** The error the framework's hook throws for a run that has just ended (`ended`). */
  stop(ended: TurnResult): MirrorStop {
    // Undefined would read as "go ahead" to the framework's hook: an ending handed here always has its error.
    if (ended.error === undefined) throw new Error(`run ${ended.turn} ended ${ended.outcome} with no error to stop on`);
    return ended.error as MirrorStop;
  }

  /** Before the run's last record: the attempt in flight charged, the final call's hold let go. */
  protected override beforeEnd(): void {
    this.deps.recording?.stop();
    // A model attempt still in flight (abandoned by an abort) may be billed: charged at its hold.
    this.endAttempt();
    // A final call's hold the run no longer needs goes back.
    this.wrap?.release(this.meter!);
    this.#unanswered = TOOL_PHASE.has(this.machine.pendingState) || this.unsent;
  }

  /** After the run's last record: calls left unanswered are answered (as the adapter's settleUnanswered does), and the result kept. */
  protected afterEnd(outcome: TurnOutcome, extra: EndExtra): TurnResult {
    const meter = this.meter!;
    if (this.#unanswered) this.answerRest(`not run: ${extra.error?.message ?? outcome}`, 'not_run');
    this.running = false;
    const answered = outcome === 'end_of_turn' || outcome === 'wrapped_up';
    const result = this.makeResult(outcome, answered ? { ...extra, text: this.lastText } : extra);
    if (this.unsent && outcome !== 'end_of_turn')
      result.unansweredToolCalls = this.slots.map((slot) => ({ call: slot.call, result: slot.result! }));
    this.result = result;
    reportRunEnd(meter, result, this.deps.logger);
    return result;
  }

  resultOf(value: MirrorStop | TurnResult, text?: string): TurnResult {
    const result = this.result!;
    if (value instanceof Error) return result;
    if (text !== undefined && result.outcome === 'end_of_turn') result.text = text;
    return result;
  }

  /** A call refused at its start: answered, journaled, and the reason handed back. */
  refuse(slot: MirrorSlot, status: 'interrupted' | 'not_run', note: string, error: MirrorStop): MirrorStop {
    refuseSlot(slot, status, note, this.deps.clock(), this.deps.journal, this.turn);
    return error;
  }

  answerRest(note: string, status: 'interrupted' | 'not_run'): void {
    answerRest(this.slots, note, status, this.deps.clock, this.deps.journal, this.turn);
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

  attemptLine(endedAt: number, outcome: AttemptEndLine): void {
    // Nothing made when neither is on: this runs on every attempt.
    if (this.deps.journal === undefined && this.deps.ledger === undefined) return;
    writeAttemptLine(this.deps, mirrorLlmLine(this.attemptFacts(), endedAt), outcome);
  }
}
