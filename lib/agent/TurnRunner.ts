import type { Logger } from 'winston';
import { State, type StateName } from '../../states/StateName';
import type { AgentLoop, LLMResponse, OperationContext, ToolCall, ToolResult } from './AgentLoop';
import type { Budget } from './Budget';
import type { SpentLimit } from './BudgetLimits';
import { llmResponseProblem, stringListProblem, toolResultProblem, usageProblem } from './checkAgentOutput';
import { retryDelay, type RetryOptions } from './retryDelay';
import { settleWithGrace, type Settled } from '../internal/settleWithGrace';
import type { Sleep } from '../internal/sleep';
import type { StateMachine } from '../machine/StateMachine';
import type { TransitionEvent } from '../machine/TransitionRecord';
import {
  BudgetExceededError,
  ContractViolationError,
  LLMCallError,
  MachineMovedError,
  OperationError,
  TurnCancelledError,
  type TurnError,
} from './TurnError';
import { addUsage, emptyUsage, usageFromResponse, type UsageDelta, type UsageTotals } from './UsageTotals';
import { messageOf } from '../internal/messageOf';
import { plural } from '../internal/text';

import type { TurnOutcome } from './TurnOutcome';

export type { TurnOutcome };

/** How a turn ended. `usage` is this turn's own; the adapter's `usage` has the totals. */
export interface TurnResult {
  outcome: TurnOutcome;
  /** The final text, for `end_of_turn`. */
  text?: string;
  /** Why the turn did not end normally. */
  error?: TurnError;
  usage: UsageTotals;
  /** 1 for the adapter's first turn. */
  turn: number;
  /** Moves the machine made during this turn. */
  transitions: number;
}

/** What a turn needs from the adapter that runs it. */
export interface TurnSettings {
  machine: StateMachine<StateName>;
  agent: AgentLoop;
  budgets: readonly Budget[];
  retry: Required<RetryOptions>;
  cancelGraceMs: number;
  sleep: Sleep;
  random: () => number;
  clock: () => number;
  logger: Logger | undefined;
}

type LLMOutcome =
  | { kind: 'response'; response: LLMResponse; attempts: number; failures: Attempt[] }
  | { kind: 'end'; result: TurnResult };

interface Attempt {
  attempt: number;
  error: string;
  delayMs?: number;
}

/**
 * One turn through the sixteen states. Every move it asks for is legal in the table, except
 * where the table has no edge for what happened, and then the move is explicitly forced with
 * its reason: cancellation outside CheckingForCancellation (→ Cancelled), a broken contract in
 * CheckingGitCommits or RunningAutoformatters (→ Error), and a machine moved behind the
 * adapter's back to a state with no edge to Error. Internal: `runTurn` makes one per turn.
 */
export class TurnRunner {
  readonly #s: TurnSettings;
  readonly #turn: number;
  readonly #controller: AbortController;
  readonly #signal: AbortSignal;
  #moves = 0;
  /** Where this turn last put the machine; anything else means someone moved it meanwhile. */
  #expected: StateName;
  #turnUsage: UsageTotals = emptyUsage();
  #lastWallAt: number;

  constructor(settings: TurnSettings, turn: number, controller: AbortController) {
    this.#s = settings;
    this.#expected = settings.machine.current;
    this.#turn = turn;
    this.#controller = controller;
    this.#signal = controller.signal;
    this.#lastWallAt = settings.clock();
  }

  /** Runs the turn to a terminal state. Never throws: a failure of the adapter itself ends the turn in Error. */
  async run(input: string): Promise<TurnResult> {
    try {
      return await this.#flow(input);
    } catch (error) {
      // A machine moved behind the adapter's back, or a bug of ours: say which, and end in Error —
      // legally where the table allows it, forced only where it does not.
      const machine = this.#s.machine;
      const cause = error instanceof MachineMovedError ? error : new OperationError('AgentWithStateMachine (unexpected)', error);
      if (!machine.isInTerminalState()) {
        this.#move(State.Error, { description: cause.message, data: { error: messageOf(error) } }, !machine.canMoveTo(State.Error), false);
      }
      return this.#result('error', { error: cause });
    }
  }

  async #flow(input: string): Promise<TurnResult> {
    const machine = this.#s.machine;
    const current = machine.current;
    if (current === State.Ready) this.#move(State.WaitingForUserInput, 'agent ready');
    else if (machine.isInTerminalState()) this.#move(State.WaitingForUserInput, { description: `turn ${this.#turn} starts`, data: { turn: this.#turn } });
    else if (current !== State.WaitingForUserInput) {
      this.#move(State.WaitingForUserInput, `runTurn() found the machine in ${current}, not between turns`, true);
    }

    // A turn on a spent budget or an already-cancelled signal makes no call. WaitingForUserInput
    // cannot reach BudgetExceeded or Cancelled, so the legal move is to Error, and the record's
    // data says which outcome it stands for.
    if (this.#signal.aborted) {
      const error = new TurnCancelledError(this.#reason(), State.WaitingForUserInput);
      this.#move(State.Error, { description: `cancelled before the turn started: ${error.reason}`, data: { outcome: 'cancelled', reason: error.reason } });
      return this.#result('cancelled', { error });
    }
    const spentAtStart = this.#spent();
    if (spentAtStart !== undefined) {
      this.#move(State.Error, { description: `${spentAtStart.message}; no LLM call made`, data: { outcome: 'budget_exceeded', ...limitData(spentAtStart) } });
      return this.#result('budget_exceeded', { error: budgetError(spentAtStart) });
    }

    this.#move(State.SendingToLLM, { description: 'sending the user message', data: { turn: this.#turn, chars: input.length } });
    let llm = await this.#callLLM('sendUserMessage', State.SendingToLLM, (ctx) => this.#s.agent.sendUserMessage(input, ctx));
    for (;;) {
      if (llm.kind === 'end') return llm.result;
      const { response } = llm;
      this.#move(State.ProcessingLLMResponse, {
        description: 'LLM responded',
        data: { attempts: llm.attempts, ...(llm.failures.length > 0 ? { failures: llm.failures } : {}), toolCalls: response.toolCalls?.length ?? 0, usage: this.#s.budgets[0]!.usage },
      });
      const calls = response.toolCalls ?? [];
      if (calls.length === 0) {
        if (this.#signal.aborted) return this.#cancel(State.ProcessingLLMResponse);
        this.#move(State.EndOfTurn, { description: 'text-only response ends the turn', data: { chars: response.text?.length ?? 0 } });
        return this.#result('end_of_turn', response.text === undefined ? {} : { text: response.text });
      }

      const callList = calls.map((c) => ({ id: c.id, name: c.name }));
      this.#move(State.ToolUseRequested, { description: `LLM requested ${plural(calls.length, 'tool call')}: ${calls.map((c) => c.name).join(', ')}`, data: { calls: callList } });
      this.#move(State.CheckingForCancellation, 'checking for cancellation before running tools');
      if (this.#signal.aborted) {
        const reason = this.#reason();
        this.#move(State.Cancelled, { description: `cancelled before tools ran: ${reason}`, data: { reason, interrupted: calls.map((c) => c.id) } });
        return this.#result('cancelled', { error: new TurnCancelledError(reason, State.CheckingForCancellation) });
      }
      this.#move(State.RunningTool, { description: `running ${calls.map((c) => c.name).join(', ')}`, data: { calls: callList } });
      const tools = await this.#runTools(calls);
      if (tools.kind === 'end') return tools.result;
      if (this.#signal.aborted) {
        // The running tool finished or gave up; the rest were reported as interrupted.
        return this.#cancel(State.RunningTool, { results: tools.summary });
      }
      this.#move(State.CheckingGitCommits, { description: `tools finished (${tools.summary.filter((r) => r.isError).length} with errors)`, data: { results: tools.summary } });

      const formatterMessages: string[] = [];
      const commits = await this.#optionalList('checkGitCommits', (ctx) => this.#s.agent.checkGitCommits?.(ctx));
      if (commits.kind === 'end') return commits.result;
      if (this.#signal.aborted) return this.#cancel(State.CheckingGitCommits);
      if (commits.list.length > 0) {
        this.#move(State.RunningAutoformatters, { description: `${plural(commits.list.length, 'new commit')}: running formatters`, data: { commits: commits.list } });
        const formatted = await this.#optionalList('runAutoformatters', (ctx) => this.#s.agent.runAutoformatters?.(commits.list, ctx), true);
        if (formatted.kind === 'end') return formatted.result;
        if (this.#signal.aborted) return this.#cancel(State.RunningAutoformatters);
        formatterMessages.push(...formatted.list);
        this.#move(State.CheckingBudget, {
          description: 'formatters done',
          data: { messages: formatted.list.length, ...(formatted.failure === undefined ? {} : { formatterError: formatted.failure }) },
        });
      } else {
        this.#move(State.CheckingBudget, { description: 'no new commits', data: commits.failure === undefined ? undefined : { gitError: commits.failure } });
      }

      const spent = this.#spent();
      if (spent !== undefined) {
        this.#move(State.BudgetExceeded, { description: spent.message, data: limitData(spent) });
        return this.#result('budget_exceeded', { error: budgetError(spent) });
      }
      if (this.#signal.aborted) return this.#cancel(State.CheckingBudget);
      this.#move(State.GatheringAdditionalMessages, { description: 'budget has room', data: { usage: this.#s.budgets[0]!.usage } });

      const gathered = await this.#settle((ctx) => this.#s.agent.gatherAdditionalMessages?.(ctx) ?? Promise.resolve([]));
      if (gathered.kind === 'abandoned' || this.#signal.aborted) return this.#cancel(State.GatheringAdditionalMessages);
      if (gathered.kind === 'threw') {
        const error = new OperationError('gatherAdditionalMessages', gathered.error);
        this.#move(State.Error, { description: error.message, data: { error: messageOf(gathered.error) } });
        return this.#result('error', { error });
      }
      const problem = stringListProblem(gathered.value);
      if (problem !== undefined) return this.#violation('gatherAdditionalMessages', problem, gathered.value);
      const messages = [...(gathered.value as string[]), ...formatterMessages];

      this.#move(State.SendingToolResults, {
        description: `sending ${plural(tools.results.length, 'tool result')} and ${plural(messages.length, 'message')}`,
        data: { results: tools.results.length, messages: messages.length },
      });
      llm = await this.#callLLM('sendToolResults', State.SendingToolResults, (ctx) => this.#s.agent.sendToolResults(tools.results, messages, ctx));
    }
  }

  /** One LLM call with retries; charges every attempt and checks the budget before each. */
  async #callLLM(
    operation: 'sendUserMessage' | 'sendToolResults',
    from: typeof State.SendingToLLM | typeof State.SendingToolResults,
    invoke: (ctx: OperationContext) => Promise<LLMResponse>,
  ): Promise<LLMOutcome> {
    const { retries, baseDelayMs, maxDelayMs, shouldRetry } = this.#s.retry;
    const failures: Attempt[] = [];
    for (let attempt = 1; ; attempt++) {
      if (this.#signal.aborted) return { kind: 'end', result: this.#cancel(from, { failures }) };
      const spent = this.#spent();
      if (spent !== undefined) {
        // From a sending state the table reaches Error, not BudgetExceeded: the data says why.
        this.#move(State.Error, { description: `${spent.message}; no further LLM call made`, data: { outcome: 'budget_exceeded', ...limitData(spent), failures } });
        return { kind: 'end', result: this.#result('budget_exceeded', { error: budgetError(spent) }) };
      }
      this.#charge({ llmCalls: 1 });
      const settled = await this.#settle((ctx) => invoke({ ...ctx, attempt }));
      if (settled.kind === 'abandoned' || (settled.kind === 'threw' && this.#signal.aborted)) {
        return { kind: 'end', result: this.#cancel(from, { attempt, failures }) };
      }
      if (settled.kind === 'value') {
        // Usage the response reports was paid for, even if the rest of it is malformed.
        const reported: unknown = typeof settled.value === 'object' && settled.value !== null ? (settled.value as { usage?: unknown }).usage : undefined;
        if (usageProblem(reported) === undefined) this.#charge(usageFromResponse(reported as LLMResponse['usage']));
        const problem = llmResponseProblem(settled.value);
        if (problem !== undefined) return { kind: 'end', result: this.#violation(operation, problem, settled.value) };
        return { kind: 'response', response: settled.value, attempts: attempt, failures };
      }
      const failure: Attempt = { attempt, error: messageOf(settled.error) };
      failures.push(failure);
      let retry: boolean;
      try {
        retry = attempt <= retries && shouldRetry(settled.error);
      } catch (predicateError) {
        const error = new OperationError('retry.shouldRetry', predicateError);
        this.#move(State.Error, { description: error.message, data: { operation, failures } });
        return { kind: 'end', result: this.#result('error', { error }) };
      }
      if (!retry) {
        const error = new LLMCallError(operation, failures, settled.error);
        this.#move(State.Error, { description: error.message, data: { operation, failures } });
        return { kind: 'end', result: this.#result('error', { error }) };
      }
      failure.delayMs = retryDelay(attempt, baseDelayMs, maxDelayMs, this.#s.random);
      this.#s.logger?.warn(`${operation} attempt ${attempt} failed (${failure.error}); retrying in ${failure.delayMs} ms`, { turn: this.#turn });
      await this.#s.sleep(failure.delayMs, this.#signal);
    }
  }

  /** Runs the response's tool calls in order, stopping early on cancellation or a spent budget. */
  async #runTools(
    calls: ToolCall[],
  ): Promise<{ kind: 'done'; results: ToolResult[]; summary: Array<{ callId: string; name: string; isError: boolean; ms: number }> } | { kind: 'end'; result: TurnResult }> {
    const results: ToolResult[] = [];
    const summary: Array<{ callId: string; name: string; isError: boolean; ms: number; note?: string }> = [];
    const skipRest = (from: number, why: string): void => {
      for (const call of calls.slice(from)) {
        results.push({ callId: call.id, output: why, isError: true });
        summary.push({ callId: call.id, name: call.name, isError: true, ms: 0, note: why });
      }
    };
    for (let i = 0; i < calls.length; i++) {
      const call = calls[i]!;
      if (this.#signal.aborted) {
        skipRest(i, `interrupted: ${this.#reason()}`);
        break;
      }
      const spent = this.#spent();
      if (spent !== undefined) {
        skipRest(i, `not run: ${spent.message}`);
        break;
      }
      this.#charge({ toolCalls: 1 });
      const started = this.#s.clock();
      const settled = await this.#settle((ctx) => this.#s.agent.runTool(call, ctx));
      const ms = Math.max(0, this.#s.clock() - started);
      if (settled.kind === 'abandoned') {
        skipRest(i, `interrupted: ${this.#reason()} (the tool did not stop within ${this.#s.cancelGraceMs} ms)`);
        break;
      }
      if (settled.kind === 'threw') {
        // As every agent framework does: the LLM sees the failure and decides what to do.
        const output = messageOf(settled.error);
        results.push({ callId: call.id, output, isError: true });
        summary.push({ callId: call.id, name: call.name, isError: true, ms, note: output });
        continue;
      }
      const problem = toolResultProblem(settled.value, call);
      if (problem !== undefined) return { kind: 'end', result: this.#violation(`runTool(${call.name})`, problem, settled.value) };
      results.push(settled.value);
      summary.push({ callId: call.id, name: call.name, isError: settled.value.isError === true, ms });
    }
    return { kind: 'done', results, summary };
  }

  /**
   * An optional operation returning strings (git commits, formatter messages). A throw is not
   * fatal — CheckingGitCommits and RunningAutoformatters have no way to Error in the table — so
   * it is kept in the next record's data and logged; a malformed value is a contract violation.
   */
  async #optionalList(
    operation: string,
    invoke: (ctx: OperationContext) => Promise<string[] | void> | undefined,
    allowVoid = false,
  ): Promise<{ kind: 'list'; list: string[]; failure?: string } | { kind: 'end'; result: TurnResult }> {
    const settled = await this.#settle((ctx) => invoke(ctx) ?? Promise.resolve([]));
    if (settled.kind === 'abandoned') return { kind: 'list', list: [] };
    if (settled.kind === 'threw') {
      const failure = messageOf(settled.error);
      this.#s.logger?.warn(`${operation} failed: ${failure}; going on without it`, { turn: this.#turn });
      return { kind: 'list', list: [], failure };
    }
    const problem = stringListProblem(settled.value, allowVoid);
    if (problem !== undefined) return { kind: 'end', result: this.#violation(operation, problem, settled.value) };
    return { kind: 'list', list: (settled.value ?? []) as string[] };
  }

  /**
   * Awaits an operation; on cancellation, gives it `cancelGraceMs` to finish or abort through its
   * signal, then abandons it so that a tool ignoring the signal cannot hang the turn.
   */
  #settle<T>(op: (ctx: OperationContext) => Promise<T> | T): Promise<Settled<T>> {
    return settleWithGrace(() => op({ signal: this.#signal, turn: this.#turn }), this.#signal, this.#s.cancelGraceMs, this.#s.sleep);
  }

  /** Every move of the turn goes through here; `forced` only where the table has no edge. */
  #move(to: StateName, event: TransitionEvent, forced = false, check = true): void {
    const machine = this.#s.machine;
    // Never ask for a move from a state we did not put the machine in: it would be illegal.
    if (check && machine.current !== this.#expected) throw new MachineMovedError(this.#expected, machine.current, this.#turn);
    if (forced) machine.forceTransition(to, event);
    else machine.transition(to, event);
    this.#moves += 1;
    this.#expected = to;
  }

  /** Cancellation outside CheckingForCancellation: the table has no edge, so the move is forced, with the reason. */
  #cancel(from: StateName, data: Record<string, unknown> = {}): TurnResult {
    const reason = this.#reason();
    this.#move(State.Cancelled, { description: `cancelled during ${from}: ${reason}`, data: { reason, ...data } }, true);
    return this.#result('cancelled', { error: new TurnCancelledError(reason, from) });
  }

  #violation(operation: string, problem: string, value: unknown): TurnResult {
    const error = new ContractViolationError(operation, problem, value);
    // Most states reach Error legally; CheckingGitCommits and RunningAutoformatters do not, so there the move is forced.
    this.#move(State.Error, { description: error.message, data: { operation, problem } }, !this.#s.machine.canMoveTo(State.Error));
    return this.#result('error', { error });
  }

  #reason(): string {
    const reason: unknown = this.#signal.reason;
    // A bare abort() gives a DOMException, which need not be `instanceof Error` across realms.
    if (typeof reason === 'object' && reason !== null && (reason as { name?: unknown }).name === 'AbortError') return 'aborted by the caller\'s signal';
    return reason === undefined ? 'cancelled' : messageOf(reason);
  }

  #charge(delta: UsageDelta): void {
    this.#turnUsage = addUsage(this.#turnUsage, delta);
    for (const budget of this.#s.budgets) budget.charge(delta);
  }

  /** Charges the wall time since the last check, then returns the first spent limit of any budget. */
  #spent(): SpentLimit | undefined {
    this.#chargeWall();
    for (const budget of this.#s.budgets) {
      const spent = budget.spent();
      if (spent !== undefined) return spent;
    }
    return undefined;
  }

  #chargeWall(): void {
    const now = this.#s.clock();
    const elapsed = Math.max(0, now - this.#lastWallAt);
    this.#lastWallAt = now;
    if (elapsed > 0) this.#charge({ wallMs: elapsed });
  }

  #result(outcome: TurnOutcome, extra: { text?: string; error?: TurnError }): TurnResult {
    this.#chargeWall();
    this.#controller.abort('turn ended'); // releases anything still listening to this turn's signal
    return { outcome, ...extra, usage: this.#turnUsage, turn: this.#turn, transitions: this.#moves };
  }
}


function limitData(spent: SpentLimit): { limit: string; used: number; max: number } {
  return { limit: spent.limit, used: spent.used, max: spent.max };
}

function budgetError(spent: SpentLimit): BudgetExceededError {
  return new BudgetExceededError(spent.message, spent.limit, spent.used, spent.max);
}
