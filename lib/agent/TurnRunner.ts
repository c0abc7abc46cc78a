import { getEventListeners } from 'node:events';
import { State, type StateName } from '../../states/StateName';
import { messageOf } from '../internal/messageOf';
import type { Settled } from '../internal/settleWithGrace';
import { plural } from '../internal/text';
import type { ForcedLogLevel } from '../machine/TransitionRecord';
import { safeLog } from './AgentLogger';
import type { CompactInfo, LLMResponse, OperationContext, ToolCall } from './AgentLoop';
import type { Budget } from './Budget';
import { ApprovalGate, needsApproval, type ApprovalDecision, type PendingApproval } from './ApprovalGate';
import { callLLM, responseRecordData, type LLMOperation, type LLMOutcome } from './callLLM';
import { chargeCompaction } from './chargeCompaction';
import { isContextOverflow } from './isContextOverflow';
import type { LLMCallInput } from './AgentEvents';
import { ExtensionState } from './extensionStates';
import { stringListProblem } from './checkAgentOutput';
import { optionalList } from './optionalList';
import { runTools, type ToolSlot } from './runTools';
import { settleUnanswered } from './settleUnanswered';
import {
  ContractViolationError,
  LLMCallError,
  MachineMovedError,
  OperationError,
  TurnCancelledError,
  type TurnError,
} from './TurnError';
import type { TurnOutcome } from './TurnOutcome';
import type { TurnResult } from './TurnResult';
import { Deadline } from './Deadline';
import { TurnScope, type TurnSettings } from './TurnScope';
import { UsageMeter } from './UsageMeter';
import type { StallCheck } from './StallWatch';
import { budgetError, limitData } from './spentRecord';
import { finalAnswer, WrapUp, type WrapDecision } from './WrapUp';

export type { TurnOutcome };
export type { TurnResult, UnansweredToolCall } from './TurnResult';
export type { OnUnknownCost } from './priceResponse';

/** What an agent without `gatherAdditionalMessages` gathers; only ever read. */
const NOTHING_GATHERED: Settled<string[]> = { kind: 'value', value: Object.freeze([]) as unknown as string[] };

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
  #moves = 0;
  /** Where this turn last put the machine; anything else means someone moved it meanwhile. */
  #expected: StateName;
  /** Tool calls asked for whose results no successful sendToolResults has carried yet. */
  #pending: ToolSlot[] | undefined;
  /** Texts of responses that also asked for tools; made at the first. */
  #texts: string[] | undefined;
  /** A stall nudge for the model, sent with the next tool results. */
  #nudge: string | undefined;
  /** The final call's hold and the budget note (`budget.wrapUp`, `budget.visible`), when a budget asks. */
  readonly #wrap: WrapUp | undefined;

  /** Told when the turn starts waiting for approval, with what the caller gets meanwhile. */
  readonly #onPause: ((gate: ApprovalGate, result: TurnResult) => void) | undefined;

  /** `budgets[0]` is the agent's own. `controller` is this turn's alone (see TurnScope). */
  constructor(
    settings: TurnSettings,
    budgets: readonly Budget[],
    turn: number,
    controller: AbortController,
    onPause?: (gate: ApprovalGate, result: TurnResult) => void,
  ) {
    this.#s = settings;
    this.#onPause = onPause;
    this.#own = budgets[0]!;
    this.#turn = turn;
    this.#expected = settings.machine.pendingState;
    const meter = new UsageMeter({
      budgets,
      shared: settings.shared,
      external: settings.external,
      clock: settings.clock,
      onDeadline: (spent) => this.#scope.abort(new Deadline(spent)),
    });
    this.#scope = new TurnScope(settings, turn, controller, meter);
    this.#wrap = WrapUp.for(this.#scope, budgets);
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
          ended = this.#end(
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
      result = ended ?? this.#result('error', { error: cause });
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
    // Releases anything still listening to this turn's signal. Aborting costs microseconds
    // (an Event, a dispatch), so it is skipped when no listener is left to release.
    if (!signal.aborted && getEventListeners(signal, 'abort').length > 0) this.#scope.abort('turn ended');
    return result;
  }

  async #flow(input: string): Promise<TurnResult> {
    const { agent, machine, toolConcurrency } = this.#s;
    const { meter, signal } = this.#scope;
    const current = this.#expected;
    if (current === State.Ready) this.#move(State.WaitingForUserInput, 'agent ready');
    else if (machine.table.states[current]?.isTerminal === true)
      this.#move(State.WaitingForUserInput, { description: `turn ${this.#turn} starts`, data: { turn: this.#turn } });
    else if (current !== State.WaitingForUserInput)
      this.#move(State.WaitingForUserInput, `runTurn() found the machine in ${current}, not between turns`, {
        forced: true,
      });
    if (this.#s.hears('turnStart')) this.#s.emit('turnStart', { turn: this.#turn, input, startedAt: this.#s.clock() });

    // A turn on a spent budget or an already-cancelled signal makes no call. WaitingForUserInput
    // cannot reach BudgetExceeded or Cancelled, so the legal move is to Error, and the record's
    // data says which outcome it stands for.
    if (signal.aborted && this.#scope.deadline === undefined) {
      const error = new TurnCancelledError(this.#scope.reason(), State.WaitingForUserInput);
      return this.#end(
        State.Error,
        `cancelled before the turn started: ${error.reason}`,
        { reason: error.reason },
        'cancelled',
        { error },
      );
    }
    // A resumed run re-driving recorded moves does not check again what they passed then.
    const spentAtStart = this.#s.recording?.serving === true ? undefined : meter.spent();
    if (spentAtStart !== undefined)
      return this.#end(
        State.Error,
        `${spentAtStart.message}; no LLM call made`,
        limitData(spentAtStart),
        'budget_exceeded',
        { error: budgetError(spentAtStart) },
      );

    this.#move(State.SendingToLLM, {
      description: 'sending the user message',
      data: { turn: this.#turn, chars: input.length },
    });
    let from: SendingState = State.SendingToLLM;
    let llm = await this.#callLLM(
      State.SendingToLLM,
      'sendUserMessage',
      { kind: 'user_message', message: input },
      (ctx) => agent.sendUserMessage(input, ctx),
    );
    for (;;) {
      if (llm.kind === 'ended') return llm.result;
      if (llm.kind !== 'response') return this.#endCall(llm, from);
      const { response } = llm;
      // The results sent with this call reached the LLM: nothing of the last round is unanswered.
      this.#pending = undefined;
      const calls = response.toolCalls ?? [];
      this.#move(State.ProcessingLLMResponse, {
        description: 'LLM responded',
        data: responseRecordData(llm, calls.length, this.#own.usage),
      });
      if (calls.length === 0) {
        if (signal.aborted) return this.#cancel(State.ProcessingLLMResponse);
        const text = response.text === undefined ? {} : { text: response.text };
        return this.#end(
          State.EndOfTurn,
          'text-only response ends the turn',
          { chars: response.text?.length ?? 0 },
          'end_of_turn',
          text,
        );
      }
      if (response.text !== undefined && response.text !== '') (this.#texts ??= []).push(response.text);
      // A slot's times are set when its call starts or is given up, before anything reads them.
      this.#pending = calls.map((call) => ({ call, status: 'pending', startedAt: 0, endedAt: 0 }));
      const stall = this.#s.stall?.check();
      const stalled = stall === undefined ? undefined : this.#stalled(stall);
      if (stalled !== undefined) return stalled;

      const callList = calls.map((c) => ({ id: c.id, name: c.name }));
      const names = namesOf(calls);
      this.#move(State.ToolUseRequested, {
        description: `LLM requested ${plural(calls.length, 'tool call')}: ${names}`,
        data: { calls: callList },
      });
      this.#move(State.CheckingForCancellation, 'checking for cancellation before running tools');
      if (signal.aborted) {
        if (this.#scope.deadline !== undefined) return this.#cancel(State.CheckingForCancellation);
        const reason = this.#scope.reason();
        const error = new TurnCancelledError(reason, State.CheckingForCancellation);
        return this.#end(
          State.Cancelled,
          `cancelled before tools ran: ${reason}`,
          { reason, interrupted: calls.map((c) => c.id) },
          'cancelled',
          { error },
        );
      }
      let decisions: ApprovalDecision[] | undefined;
      const approval = this.#s.approval;
      if (approval !== undefined) {
        const waiting = calls.filter((c) => needsApproval(approval.policy, c));
        if (waiting.length > 0) {
          const answered = await this.#awaitApproval(waiting, approval.timeoutMs);
          if (answered.kind === 'ended') return answered.result;
          decisions = answered.decisions;
        }
      }
      const runData: Record<string, unknown> =
        toolConcurrency === 1 ? { calls: callList } : { calls: callList, concurrency: toolConcurrency };
      if (decisions !== undefined) runData['decisions'] = decisions;
      this.#move(State.RunningTool, { description: `running ${names}`, data: runData });
      const tools = await runTools(this.#scope, this.#pending);
      if (tools.kind === 'failed') return this.#failed(tools.error, tools.data);
      // The running tools finished or gave up; the rest were reported as interrupted.
      if (signal.aborted) return this.#cancel(State.RunningTool, { results: tools.summary });
      let errors = 0;
      for (const r of tools.summary) if (r.isError) errors += 1;
      this.#move(State.CheckingGitCommits, {
        description: `tools finished (${errors} with errors)`,
        data: { results: tools.summary },
      });

      const formatterMessages: string[] = [];
      // An operation the agent lacks is not awaited: it would only cost a promise and a tick.
      const commits =
        agent.checkGitCommits == null
          ? { kind: 'list' as const, list: [] }
          : await optionalList(this.#scope, 'checkGitCommits', (ctx) => agent.checkGitCommits?.(ctx));
      if (commits.kind === 'violation') return this.#violation('checkGitCommits', commits.problem, commits.value);
      if (signal.aborted) return this.#cancel(State.CheckingGitCommits);
      if (commits.list.length > 0) {
        this.#move(State.RunningAutoformatters, {
          description: `${plural(commits.list.length, 'new commit')}: running formatters`,
          data: { commits: commits.list },
        });
        const formatted = await optionalList(
          this.#scope,
          'runAutoformatters',
          (ctx) => agent.runAutoformatters?.(commits.list, ctx),
          true,
        );
        if (formatted.kind === 'violation')
          return this.#violation('runAutoformatters', formatted.problem, formatted.value);
        if (signal.aborted) return this.#cancel(State.RunningAutoformatters);
        formatterMessages.push(...formatted.list);
        const data =
          formatted.failure === undefined
            ? { messages: formatted.list.length }
            : { messages: formatted.list.length, formatterError: formatted.failure };
        this.#move(State.CheckingBudget, { description: 'formatters done', data });
      } else {
        this.#move(
          State.CheckingBudget,
          commits.failure === undefined
            ? 'no new commits'
            : { description: 'no new commits', data: { gitError: commits.failure } },
        );
      }

      const spent = this.#s.recording?.serving === true ? undefined : meter.spent();
      if (spent !== undefined)
        return this.#end(State.BudgetExceeded, spent.message, limitData(spent), 'budget_exceeded', {
          error: budgetError(spent),
        });
      if (signal.aborted) return this.#cancel(State.CheckingBudget);
      this.#move(State.GatheringAdditionalMessages, {
        description: 'budget has room',
        data: { usage: this.#own.usage },
      });

      const gathered =
        agent.gatherAdditionalMessages == null
          ? NOTHING_GATHERED
          : await this.#scope.settle((ctx) => agent.gatherAdditionalMessages?.(ctx) ?? Promise.resolve([]));
      if (gathered.kind === 'abandoned' || signal.aborted) return this.#cancel(State.GatheringAdditionalMessages);
      if (gathered.kind === 'threw')
        return this.#failed(new OperationError('gatherAdditionalMessages', gathered.error), {
          error: messageOf(gathered.error),
        });
      const problem = stringListProblem(gathered.value);
      if (problem !== undefined) return this.#violation('gatherAdditionalMessages', problem, gathered.value);
      // formatterMessages is this round's own array: it can be sent as it is when nothing was gathered.
      const messages =
        gathered === NOTHING_GATHERED ? formatterMessages : [...(gathered.value as string[]), ...formatterMessages];
      if (this.#nudge !== undefined) messages.push(this.#nudge);
      this.#nudge = undefined;

      const results = tools.results;
      const description = `sending ${plural(results.length, 'tool result')} and ${plural(messages.length, 'message')}`;
      this.#move(State.SendingToolResults, {
        description,
        data: { results: results.length, messages: messages.length },
      });
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
    this.#move(COMPACTING, {
      description: `${operation} overflowed the model's context: compacting the conversation`,
      data: { ...llm.data, error: messageOf(llm.error.cause) },
    });
    const spent = meter.spent();
    if (spent !== undefined)
      return {
        kind: 'ended',
        result: this.#end(State.Error, `${spent.message}; no compaction made`, limitData(spent), 'budget_exceeded', {
          error: budgetError(spent),
        }),
      };
    const info: CompactInfo = { operation, error: llm.error.cause, turn: this.#turn };
    const settled = await this.#scope.settle((ctx) => compact(info, ctx));
    if (settled.kind === 'abandoned' || signal.aborted) return { kind: 'ended', result: this.#cancel(COMPACTING) };
    if (settled.kind === 'threw')
      return {
        kind: 'ended',
        result: this.#failed(new OperationError('compact', settled.error), {
          operation: 'compact',
          error: messageOf(settled.error),
        }),
      };
    const charged = chargeCompaction(this.#scope, settled.value);
    if (charged.error !== undefined)
      return { kind: 'ended', result: this.#failed(charged.error, { operation: 'compact' }) };
    this.#move(from, {
      description: `conversation compacted: sending again`,
      data: { ...charged.data, usage: this.#own.usage },
    });
    const again = await callLLM(this.#scope, operation, input, invoke);
    return again;
  }

  /** → WrappingUp, the final call, → EndOfTurn with its answer (`wrapped_up`); tool calls it asks for stay unanswered. */
  async #wrapUp(decision: WrapDecision): Promise<TurnResult> {
    this.#move(WRAPPING_UP, decision.event);
    const llm = await this.#wrap!.final(decision);
    if (llm.kind !== 'response') return this.#endCall(llm, WRAPPING_UP);
    const { text, data, pending } = finalAnswer(llm);
    this.#pending = pending;
    return this.#end(State.EndOfTurn, 'the final answer within the cap ends the turn', data, 'wrapped_up', { text });
  }

  /**
   * Moves to AwaitingApproval with the requests in the move's data, tells the caller (the
   * turn's result so far: `awaiting_approval`), and waits for every answer, the timeout or a
   * cancel — the wait's wall time is not the turn's (`maxWallMs`): it has its own bound. Denied
   * calls are answered with the reason at once; approved ones run, with the input the person
   * gave if any.
   */
  async #awaitApproval(
    waiting: ToolCall[],
    timeoutMs: number | undefined,
  ): Promise<{ kind: 'answered'; decisions: ApprovalDecision[] } | { kind: 'ended'; result: TurnResult }> {
    const { meter, signal } = this.#scope;
    const gate = new ApprovalGate(waiting);
    const requests = gate.pending;
    const data: Record<string, unknown> = { calls: requests };
    if (timeoutMs !== undefined) data['timeoutMs'] = timeoutMs;
    this.#move(AWAITING_APPROVAL, {
      description: `waiting for approval of ${plural(waiting.length, 'tool call')}: ${namesOf(waiting)}`,
      data,
    });
    meter.pauseWall();
    const stopTimer = new AbortController();
    let onAbort: (() => void) | undefined;
    const how = await new Promise<'answered' | 'timeout' | 'aborted'>((resolve) => {
      if (signal.aborted) return resolve('aborted');
      onAbort = () => resolve('aborted');
      signal.addEventListener('abort', onAbort, { once: true });
      void gate.answered.then(() => resolve('answered'));
      if (timeoutMs !== undefined) void this.#s.sleep(timeoutMs, stopTimer.signal).then(() => resolve('timeout'));
      this.#onPause?.(gate, this.#pausedResult(requests));
    });
    if (onAbort !== undefined) signal.removeEventListener('abort', onAbort);
    stopTimer.abort();
    meter.resumeWall();
    const ids = waiting.map((c) => c.id);
    if (how === 'aborted') {
      if (this.#scope.deadline !== undefined) return { kind: 'ended', result: this.#cancel(AWAITING_APPROVAL) };
      const reason = this.#scope.reason();
      return {
        kind: 'ended',
        result: this.#end(
          State.Cancelled,
          `cancelled while waiting for approval: ${reason}`,
          { reason, interrupted: ids },
          'cancelled',
          { error: new TurnCancelledError(reason, AWAITING_APPROVAL) },
        ),
      };
    }
    if (how === 'timeout') {
      const reason = `no answer to the approval request within ${timeoutMs} ms`;
      return {
        kind: 'ended',
        result: this.#end(
          APPROVAL_TIMED_OUT,
          reason,
          { timeoutMs, unanswered: gate.pending.map((p) => p.callId) },
          'cancelled',
          { error: new TurnCancelledError(reason, AWAITING_APPROVAL) },
        ),
      };
    }
    const decisions = gate.decisions();
    const at = this.#s.clock();
    for (const decision of decisions) {
      const slot = this.#pending?.find((s) => s.call.id === decision.callId);
      if (slot === undefined) continue;
      if (!decision.approved) {
        const note = `denied: ${decision.reason}`;
        slot.status = 'not_run';
        slot.note = note;
        slot.result = { callId: slot.call.id, output: note, isError: true };
        slot.startedAt = slot.endedAt = at;
      } else if ('input' in decision) slot.call = { ...slot.call, input: decision.input };
    }
    return { kind: 'answered', decisions };
  }

  /** What the caller gets while the turn waits for approval: the turn so far, not ended. */
  #pausedResult(requests: PendingApproval[]): TurnResult {
    const { meter } = this.#scope;
    const result: TurnResult = {
      outcome: 'awaiting_approval',
      usage: meter.usage,
      turn: this.#turn,
      transitions: this.#moves,
      pendingApprovals: requests,
    };
    if (this.#texts !== undefined) result.texts = [...this.#texts];
    return result;
  }

  /** The move after an LLM call that ends the turn: aborted, refused by a budget, or failed. */
  #endCall(llm: Exclude<LLMOutcome, { kind: 'response' }>, from: StateName): TurnResult {
    if (llm.kind === 'aborted') return this.#cancel(from, llm.data);
    if (llm.kind === 'failed') return this.#failed(llm.error, llm.data);
    // From a sending state the table reaches Error, not BudgetExceeded: the data says why.
    const { spent } = llm;
    return this.#end(
      State.Error,
      `${spent.message}; no further LLM call made`,
      { ...limitData(spent), failures: llm.failures },
      'budget_exceeded',
      { error: budgetError(spent) },
    );
  }

  /** Every move of the turn goes through here; `forced` only where the table has no edge. */
  #move(
    to: StateName,
    event: string | { description: string; data?: unknown; logLevel?: ForcedLogLevel },
    how: { forced?: boolean; check?: boolean } = NORMAL,
  ): void {
    const machine = this.#s.machine;
    // Never ask for a move from a state we did not put the machine in: it would be illegal.
    // The machine validates against its queued tail (a listener's moves wait their turn), so compare with that.
    const tail = machine.pendingState;
    if (how.check !== false && tail !== this.#expected) throw new MachineMovedError(this.#expected, tail, this.#turn);
    if (how.forced === true) machine.forceTransition(to, event);
    else machine.transition(to, event);
    this.#moves += 1;
    this.#expected = to;
  }

  /** The move that ends the turn: its record carries the outcome and the agent's usage so far. */
  #end(
    to: StateName,
    description: string,
    data: Record<string, unknown>,
    outcome: TurnOutcome,
    extra: { text?: string; error?: TurnError },
    how: { forced?: boolean; check?: boolean; logLevel?: ForcedLogLevel } = NORMAL,
  ): TurnResult {
    this.#scope.meter.chargeWall();
    const event = {
      description,
      data: { ...data, outcome, usage: this.#own.usage },
      ...(how.logLevel === undefined ? {} : { logLevel: how.logLevel }),
    };
    this.#move(to, event, how);
    return this.#result(outcome, extra);
  }

  /**
   * Cancellation outside CheckingForCancellation: the table has no edge, so the move is forced,
   * with the reason, and logged at info (an ordinary cancel is news, not a fault). A passed
   * deadline ends the turn the same way, as budget_exceeded.
   */
  #cancel(from: StateName, data: Record<string, unknown> = {}): TurnResult {
    const machine = this.#s.machine;
    const spent = this.#scope.deadline;
    if (spent !== undefined) {
      const to = machine.canMoveTo(State.BudgetExceeded) ? State.BudgetExceeded : State.Error;
      const forced = to === State.BudgetExceeded ? false : !machine.canMoveTo(State.Error);
      return this.#end(
        to,
        `${spent.message} (deadline passed during ${from})`,
        { ...limitData(spent), ...data },
        'budget_exceeded',
        { error: budgetError(spent) },
        { forced },
      );
    }
    const text = this.#scope.reason();
    return this.#end(
      State.Cancelled,
      `cancelled during ${from}: ${text}`,
      { reason: text, ...data },
      'cancelled',
      { error: new TurnCancelledError(text, from) },
      { forced: true, logLevel: 'info' },
    );
  }

  /**
   * A stall detector threw (→ Error), or fired: → Stalled, then with policy `stop` →
   * StallStopped (outcome `stalled`); with `nudge` the turn goes on, the nudge kept for the next results.
   */
  #stalled(stall: StallCheck): TurnResult | undefined {
    if (stall.kind === 'threw') return this.#failed(stall.error, { operation: 'stall detector' });
    this.#move(STALLED, stall.event);
    this.#nudge = stall.nudge;
    if (stall.error === undefined) return undefined;
    return this.#end(STALL_STOPPED, stall.error.message, { detector: stall.finding.detector }, 'stalled', {
      error: stall.error,
    });
  }

  #violation(operation: string, problem: string, value: unknown): TurnResult {
    return this.#failed(new ContractViolationError(operation, problem, value), { operation, problem });
  }

  /** Ends the turn in Error. Most states reach Error legally; CheckingGitCommits and RunningAutoformatters do not, so there the move is forced. */
  #failed(error: TurnError, data: Record<string, unknown>): TurnResult {
    return this.#end(
      State.Error,
      error.message,
      data,
      'error',
      { error },
      { forced: !this.#s.machine.canMoveTo(State.Error) },
    );
  }

  #result(outcome: TurnOutcome, extra: { text?: string; error?: TurnError }): TurnResult {
    const { meter } = this.#scope;
    meter.chargeWall();
    meter.stop();
    const result = { outcome } as TurnResult;
    if ('text' in extra) result.text = extra.text;
    if ('error' in extra) result.error = extra.error;
    result.usage = meter.usage;
    result.turn = this.#turn;
    result.transitions = this.#moves;
    if (this.#texts !== undefined) result.texts = this.#texts;
    return result;
  }
}

const NORMAL = Object.freeze({});

// Extension states: the adapter checked at construction that its table has their edges.
const AWAITING_APPROVAL = ExtensionState.AwaitingApproval as unknown as StateName;
const APPROVAL_TIMED_OUT = ExtensionState.ApprovalTimedOut as unknown as StateName;
const COMPACTING = ExtensionState.Compacting as unknown as StateName;
const STALLED = ExtensionState.Stalled as unknown as StateName;
const STALL_STOPPED = ExtensionState.StallStopped as unknown as StateName;
const WRAPPING_UP = ExtensionState.WrappingUp as unknown as StateName;

/** `a, b, c`: the names of the calls, for descriptions. */
function namesOf(calls: readonly ToolCall[]): string {
  let names = calls[0]?.name ?? '';
  for (let i = 1; i < calls.length; i++) names += `, ${calls[i]!.name}`;
  return names;
}
