import { getEventListeners } from 'node:events';
import { State, type StateName } from '../../../states/StateName';
import { messageOf } from '../../internal/messageOf';
import { safeLog } from '../AgentLogger';
import type { CompactInfo, LLMResponse, OperationContext } from '../AgentLoop';
import type { Budget } from '../money/Budget';
import { needsApproval, type ApprovalDecision, type ApprovalGate } from '../ApprovalGate';
import { callLLM, responseRecord, type LLMOperation, type LLMOutcome } from '../calls/callLLM';
import { chargeCompaction } from '../calls/chargeCompaction';
import { budgetedHook } from '../calls/budgetedLLM';
import { isContextOverflow } from '../retry/isContextOverflow';
import type { LLMCallInput } from '../AgentEvents';
import { ExtensionState, WRAPPING_UP } from '../extensionStates';
import { runTools, type ToolSlot } from '../calls/runTools';
import { settleUnanswered } from './settleUnanswered';
import { LLMCallError, MachineMovedError, OperationError } from '../TurnError';
import type { TurnOutcome } from '../TurnOutcome';
import type { TurnResult } from '../TurnResult';
import { Deadline } from '../money/Deadline';
import { TurnScope, type TurnSettings } from '../turn/TurnScope';
import { UsageMeter } from '../money/UsageMeter';
import { awaitApproval } from './awaitApproval';
import {
  CHECKING_CANCELLATION,
  runningTools,
  sendingToolResults,
  sendingUserMessage,
  TEXT_ONLY_END,
  toolsRequested,
} from '../turn/turnEvents';
import { messagesAfterTools } from './messagesAfterTools';
import { TurnMoves } from './TurnMoves';
import type { StallCheck } from '../stall/StallWatch';
import { CapPause } from '../money/CapPause';
import type { SpentLimit } from '../BudgetLimits';
import { finalAnswer, WrapUp, type WrapDecision } from '../endings/WrapUp';

export type { TurnOutcome };
export type { TurnResult, UnansweredToolCall } from '../TurnResult';
export type { OnUnknownCost } from '../money/priceResponse';

/** Where a call to the LLM is made from: the table's two sending states. */
type SendingState = typeof State.SendingToLLM | typeof State.SendingToolResults;

/**
 * One turn through the sixteen states: this file is the state sequence, and reads like the
 * table. The LLM call (`callLLM`), the tool pool (`runTools`) and the accounting with its
 * deadline (`UsageMeter`) report what happened; this decides the move. Every move is legal in
 * the table, except where the table has no edge for what happened, and then the move is forced
 * with its reason: cancellation (or a passed deadline) outside CheckingForCancellation, a
 * broken contract in CheckingGitCommits or RunningAutoformatters (→ Error), and a machine moved
 * behind the adapter's back to a state with no edge to Error. The record of the move that ends
 * the turn carries its `outcome` and the agent's `usage` so far, so a history file says how each
 * turn ended. Internal: `runTurn` makes one per turn.
 */
export class TurnRunner {
  readonly #s: TurnSettings;
  readonly #scope: TurnScope;
  /** The agent's own budget: records carry its usage. */
  readonly #own: Budget;
  readonly #turn: number;
  /** Every move of the turn, and its result. */
  readonly #m: TurnMoves;
  /** Tool calls asked for whose results no successful sendToolResults has carried yet. */
  #pending: ToolSlot[] | undefined;
  /** A stall nudge for the model, sent with the next tool results. */
  #nudge: string | undefined;
  /** The final call's hold and the budget note (`budget.wrapUp`, `budget.visible`), when a budget asks. */
  readonly #wrap: WrapUp | undefined;

  /** Told when the turn starts waiting for approval or for a raise, with what the caller gets meanwhile. */
  readonly #onPause: ((gate: ApprovalGate | CapPause, result: TurnResult) => void) | undefined;

  /** `budgets[0]` is the agent's own. `controller` is this turn's alone (see TurnScope). */
  constructor(
    settings: TurnSettings,
    budgets: readonly Budget[],
    turn: number,
    controller: AbortController,
    onPause?: (gate: ApprovalGate | CapPause, result: TurnResult) => void,
  ) {
    this.#s = settings;
    this.#onPause = onPause;
    this.#own = budgets[0]!;
    this.#turn = turn;
    const meter = new UsageMeter({
      budgets,
      shared: settings.shared,
      external: settings.external,
      clock: settings.clock,
      billing: settings.billing,
      // Bound, not an arrow: the bundle's keepNames names each arrow as it is made (bench: turncore).
      onDeadline: this.#onDeadline.bind(this),
    });
    this.#scope = new TurnScope(settings, turn, controller, meter);
    // Only a pausing cap refuses a call with `raises`, which is what makes a turn wait: one of
    // the run's own budgets, or an outside one that says it pauses (a BullMQ batch's in Redis).
    if (settings.external.some((e) => e.pauses === true) || budgets.some((b) => b.pauses))
      this.#scope.waitForRaise = (spent) => this.#waitForRaise(spent);
    this.#m = new TurnMoves(settings, this.#scope, this.#own, turn);
    this.#wrap = WrapUp.for(this.#scope, budgets);
  }

  #onDeadline(spent: SpentLimit): void {
    this.#scope.abort(new Deadline(spent));
  }

  /**
   * A pausing shared cap refused the next call: the caller gets `awaiting_budget`, and the turn
   * waits, out of its wall time, until `CapPause.open()` (true) or its abort (false).
   */
  async #waitForRaise(spent: SpentLimit): Promise<boolean> {
    const { meter, signal } = this.#scope;
    const pause = new CapPause(spent);
    meter.pauseWall();
    const go = await new Promise<boolean>((resolve) => {
      if (signal.aborted) return resolve(false);
      const onAbort = (): void => resolve(false);
      signal.addEventListener('abort', onAbort, { once: true });
      void pause.opened.then(() => {
        signal.removeEventListener('abort', onAbort);
        resolve(true);
      });
      this.#onPause?.(pause, this.#m.pausedAtCap(spent));
    });
    meter.resumeWall();
    return go && !signal.aborted;
  }

  /** Whether the turn was cancelled or its deadline passed. */
  get aborted(): boolean {
    return this.#scope.signal.aborted;
  }

  /** Cancels the turn (or ends it at its deadline): the running operations get their grace. */
  abort(reason: unknown): void {
    this.#scope.abort(reason);
  }

  /** Runs the turn to a terminal state. Never throws: a failure of the adapter itself ends the turn in Error. */
  async run(input: string): Promise<TurnResult> {
    const { meter, signal } = this.#scope;
    let result: TurnResult;
    try {
      // The turn's time starts now.
      meter.start();
      // Resumed and not serving from the journal (restarted): the earlier spend counts from the start.
      const earlier = this.#s.recording?.remainder();
      if (earlier !== undefined) meter.chargeOwn(earlier);
      result = await this.#flow(input);
    } catch (error) {
      // A machine moved behind the adapter's back, or a bug of ours: say which, and end in Error —
      // legally where the table allows it, forced only where it does not.
      const cause =
        error instanceof MachineMovedError ? error : new OperationError('AgentWithStateMachine (unexpected)', error);
      const machine = this.#s.machine;
      let ended: TurnResult | undefined;
      try {
        if (!machine.isInTerminalState())
          ended = this.#m.end(
            State.Error,
            cause.message,
            { error: messageOf(error) },
            'error',
            { error: cause },
            { forced: !machine.canMoveTo(State.Error), check: false },
          );
      } catch {
        // the machine refused even a forced move; the result still says why
      }
      result = ended ?? this.#m.makeResult('error', { error: cause });
    }
    // A resumed run that ended without going live: the rest of the earlier spend still counts.
    this.#wrap?.release();
    const rest = this.#s.recording?.remainder();
    if (rest !== undefined) meter.chargeOwn(rest);
    meter.stop();
    if (meter.externalDue) {
      const failed = await meter.flush();
      if (failed instanceof OperationError)
        safeLog(
          this.#s.logger,
          'warn',
          `charging an external budget at the end of turn ${this.#turn} failed: ${failed.message}`,
          { turn: this.#turn },
        );
    }
    const pending = this.#pending;
    this.#pending = undefined;
    if (pending !== undefined) result = await settleUnanswered(this.#scope, pending, result);
    // Releases anything still listening to this turn's signal; skipped when nothing listens,
    // so the adapter can keep the controller for its next turn (bench: turncore).
    if (!signal.aborted && getEventListeners(signal, 'abort').length > 0) this.#scope.abort('turn ended');
    return result;
  }

  /**
   * WaitingForUserInput, from wherever the last turn left the machine; the turn's result when
   * it cannot start (cancelled, or a budget already spent), else undefined.
   */
  #start(input: string): TurnResult | undefined {
    this.#m.enter(this.#m.expected);
    if (this.#s.hears('turnStart')) this.#s.emit('turnStart', { turn: this.#turn, input, startedAt: this.#s.clock() });
    // A resumed run re-driving recorded moves does not check again what they passed then.
    return this.#m.refuseStart(this.#s.recording?.serving === true ? undefined : this.#scope.meter.spent());
  }

  async #flow(input: string): Promise<TurnResult> {
    const { agent, toolConcurrency } = this.#s;
    const { signal } = this.#scope;
    const started = this.#start(input);
    if (started !== undefined) return started;

    this.#m.move(State.SendingToLLM, sendingUserMessage(this.#turn, input.length));
    let from: SendingState = State.SendingToLLM;
    let llm = await this.#callLLM(
      State.SendingToLLM,
      'sendUserMessage',
      { kind: 'user_message', message: input },
      (ctx) => agent.sendUserMessage(input, ctx),
    );
    for (;;) {
      if (llm.kind === 'ended') return llm.result;
      if (llm.kind !== 'response') return this.#m.endCall(llm, from);
      const { response } = llm;
      // The results sent with this call reached the LLM: nothing of the last round is unanswered.
      this.#pending = undefined;
      const calls = response.toolCalls ?? [];
      this.#m.move(State.ProcessingLLMResponse, responseRecord(llm, calls.length, this.#own.usage));
      if (calls.length === 0) {
        if (signal.aborted) return this.#m.cancel(State.ProcessingLLMResponse);
        const text = response.text === undefined ? {} : { text: response.text };
        return this.#m.end(State.EndOfTurn, TEXT_ONLY_END, { chars: response.text?.length ?? 0 }, 'end_of_turn', text);
      }
      if (response.text !== undefined && response.text !== '') (this.#m.texts ??= []).push(response.text);
      // A slot's times are set when its call starts or is given up, before anything reads them.
      this.#pending = calls.map((call) => ({ call, status: 'pending', startedAt: 0, endedAt: 0 }));
      const stall = this.#s.stall?.check();
      const stalled = stall === undefined ? undefined : this.#stalled(stall);
      if (stalled !== undefined) return stalled;

      const requested = toolsRequested(calls);
      this.#m.move(State.ToolUseRequested, requested);
      this.#m.move(State.CheckingForCancellation, CHECKING_CANCELLATION);
      if (signal.aborted) return this.#m.cancelBeforeTools(calls.map((c) => c.id));
      let decisions: ApprovalDecision[] | undefined;
      const approval = this.#s.approval;
      if (approval !== undefined) {
        const waiting = calls.filter((c) => needsApproval(approval.policy, c));
        if (waiting.length > 0) {
          const answered = await awaitApproval(
            this.#scope,
            this.#m,
            this.#pending,
            this.#onPause,
            waiting,
            approval,
            llm.notes?.fromJournal === true,
          );
          if (answered.kind === 'ended') return answered.result;
          decisions = answered.decisions;
        }
      }
      let runData: Record<string, unknown> | undefined =
        toolConcurrency === 1 ? undefined : { concurrency: toolConcurrency };
      if (decisions !== undefined) (runData ??= {})['decisions'] = decisions;
      this.#m.move(State.RunningTool, runningTools(calls, runData, requested.data.calls));
      const tools = await runTools(this.#scope, this.#pending);
      if (tools.kind === 'failed') return this.#m.failed(tools.error, tools.data);
      if (tools.kind === 'budget')
        return this.#m.overBudget(State.Error, tools.spent, { results: tools.summary }, '', {
          forced: !this.#s.machine.canMoveTo(State.Error),
        });
      // The running tools finished or gave up; the rest were reported as interrupted.
      if (signal.aborted) return this.#m.cancel(State.RunningTool, { results: tools.summary });
      // The messages are this round's own array: the nudge can go at its end.
      const messages = await messagesAfterTools(this.#scope, this.#m, this.#own, tools.summary);
      if (!Array.isArray(messages)) return messages;
      if (this.#nudge !== undefined) messages.push(this.#nudge);
      this.#nudge = undefined;

      const results = tools.results;
      this.#m.move(State.SendingToolResults, sendingToolResults(results.length, messages.length));
      from = State.SendingToolResults;
      llm = await this.#callLLM(
        State.SendingToolResults,
        'sendToolResults',
        { kind: 'tool_results', results, messages },
        (ctx) => agent.sendToolResults(results, messages, ctx),
      );
    }
  }

  /**
   * One LLM call from sending state `from`; with compaction on, a call that failed because the
   * conversation is longer than the model's context moves to Compacting, has the loop compact
   * it, moves back to `from` and is made once more. `ended` when the compaction ended the turn.
   */
  async #callLLM(
    from: SendingState,
    operation: LLMOperation,
    input: LLMCallInput,
    invoke: (ctx: OperationContext) => Promise<LLMResponse>,
  ): Promise<LLMOutcome | { kind: 'ended'; result: TurnResult }> {
    const llm = await (this.#wrap?.call(operation, input, invoke) ?? callLLM(this.#scope, operation, input, invoke));
    if (llm.kind === 'wrap') return { kind: 'ended', result: await this.#wrapUp(llm) };
    const compact = this.#s.compact;
    if (compact === undefined || llm.kind !== 'failed' || !(llm.error instanceof LLMCallError)) return llm;
    if (!isContextOverflow(llm.error.cause)) return llm;
    const { meter, signal } = this.#scope;
    this.#m.move(COMPACTING, {
      description: `${operation} overflowed the model's context: compacting the conversation`,
      data: { ...llm.data, error: messageOf(llm.error.cause) },
    });
    const spent = meter.spent();
    if (spent !== undefined)
      return { kind: 'ended', result: this.#m.overBudget(State.Error, spent, {}, '; no compaction made') };
    const info: CompactInfo = { operation, error: llm.error.cause, turn: this.#turn };
    // Its LLM calls go through the run's budgets: held before they start, charged after.
    const hook = budgetedHook(this.#scope, 'compact');
    const settled = await this.#scope.settleHook((ctx) => compact(info, ctx), hook.llm);
    if (settled.kind === 'abandoned' || signal.aborted) return { kind: 'ended', result: this.#m.cancel(COMPACTING) };
    const calls = hook.calls.length > 0 ? { compactionCalls: hook.calls } : {};
    // The budgets refused a call (or its response passed its bound): the run ends as any call's refusal ends it.
    if (hook.spent !== undefined) return { kind: 'ended', result: this.#m.overBudget(State.Error, hook.spent, calls) };
    if (settled.kind === 'threw')
      return {
        kind: 'ended',
        result: this.#m.failed(new OperationError('compact', settled.error), {
          operation: 'compact',
          error: messageOf(settled.error),
          ...calls,
        }),
      };
    const charged = chargeCompaction(this.#scope, settled.value);
    if (charged.error !== undefined)
      return { kind: 'ended', result: this.#m.failed(charged.error, { operation: 'compact', ...calls }) };
    this.#m.move(from, {
      description: `conversation compacted: sending again`,
      data: { ...charged.data, ...calls, usage: this.#own.usage },
    });
    const again = await callLLM(this.#scope, operation, input, invoke);
    return again;
  }

  /** → WrappingUp, the final call, → EndOfTurn with its answer (`wrapped_up`); tool calls it asks for stay unanswered. */
  async #wrapUp(decision: WrapDecision): Promise<TurnResult> {
    this.#m.move(WRAPPING_UP, decision.event);
    const llm = await this.#wrap!.final(decision);
    if (llm.kind !== 'response') return this.#m.endCall(llm, WRAPPING_UP);
    const { text, data, pending } = finalAnswer(llm);
    this.#pending = pending;
    return this.#m.end(State.EndOfTurn, 'the final answer within the cap ends the turn', data, 'wrapped_up', { text });
  }

  /** A stall detector threw or fired (`TurnCore.stalled`); with `nudge` the turn goes on, the nudge kept for the next results. */
  #stalled(stall: StallCheck): TurnResult | undefined {
    if (stall.kind === 'stalled') this.#nudge = stall.nudge;
    return this.#m.stalled(stall);
  }
}

// Extension states: the adapter checked at construction that its table has their edges.
const COMPACTING = ExtensionState.Compacting as unknown as StateName;
