import { getEventListeners } from 'node:events';
import { State, type StateName } from '../../states/StateName';
import { messageOf } from '../internal/messageOf';
import type { Settled } from '../internal/settleWithGrace';
import { plural } from '../internal/text';
import type { ForcedLogLevel } from '../machine/TransitionRecord';
import { safeLog } from './AgentLogger';
import type { ToolCall } from './AgentLoop';
import type { Budget } from './Budget';
import type { SpentLimit } from './BudgetLimits';
import { callLLM, responseRecordData, type LLMOutcome } from './callLLM';
import { stringListProblem } from './checkAgentOutput';
import { optionalList } from './optionalList';
import { runTools, type ToolSlot } from './runTools';
import { settleUnanswered } from './settleUnanswered';
import {
  BudgetExceededError,
  ContractViolationError,
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

  /** `budgets[0]` is the agent's own. `controller` is this turn's alone (see TurnScope). */
  constructor(settings: TurnSettings, budgets: readonly Budget[], turn: number, controller: AbortController) {
    this.#s = settings;
    this.#own = budgets[0]!;
    this.#turn = turn;
    this.#expected = settings.machine.pendingState;
    const meter = new UsageMeter({
      budgets,
      external: settings.external,
      clock: settings.clock,
      onDeadline: (spent) => this.#scope.abort(new Deadline(spent)),
    });
    this.#scope = new TurnScope(settings, turn, controller, meter);
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
    const spentAtStart = meter.spent();
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
    let llm = await callLLM(this.#scope, 'sendUserMessage', { kind: 'user_message', message: input }, (ctx) =>
      agent.sendUserMessage(input, ctx),
    );
    for (;;) {
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
      this.#move(State.RunningTool, {
        description: `running ${names}`,
        data: toolConcurrency === 1 ? { calls: callList } : { calls: callList, concurrency: toolConcurrency },
      });
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

      const spent = meter.spent();
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

      const results = tools.results;
      const description = `sending ${plural(results.length, 'tool result')} and ${plural(messages.length, 'message')}`;
      this.#move(State.SendingToolResults, {
        description,
        data: { results: results.length, messages: messages.length },
      });
      from = State.SendingToolResults;
      llm = await callLLM(this.#scope, 'sendToolResults', { kind: 'tool_results', results, messages }, (ctx) =>
        agent.sendToolResults(results, messages, ctx),
      );
    }
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

/** `a, b, c`: the names of the calls, for descriptions. */
function namesOf(calls: readonly ToolCall[]): string {
  let names = calls[0]?.name ?? '';
  for (let i = 1; i < calls.length; i++) names += `, ${calls[i]!.name}`;
  return names;
}

function limitData(spent: SpentLimit): { limit: string; used: number; max: number } {
  return { limit: spent.limit, used: spent.used, max: spent.max };
}

function budgetError(spent: SpentLimit): BudgetExceededError {
  return new BudgetExceededError(spent.message, spent.limit, spent.used, spent.max);
}
