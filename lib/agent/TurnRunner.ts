import { getEventListeners } from 'node:events';
import { GraceGroup } from '../internal/GraceGroup';
import { State, type StateName } from '../../states/StateName';
import type { AgentLoop, LLMResponse, OperationContext, Pricing, SettleInfo, ToolCall, ToolResult, Usage } from './AgentLoop';
import type { AgentEvents, LLMCallInput, ToolCallEvent } from './AgentEvents';
import { safeLog, type AgentLogger } from './AgentLogger';
import type { Budget } from './Budget';
import { spentLimit, type SpentLimit } from './BudgetLimits';
import { llmResponseProblem, splitUsage, stringListProblem, toolResultProblem } from './checkAgentOutput';
import type { ExternalBudget } from './ExternalBudget';
import { retryAfterMs, type ResolvedRetry } from './retryAfter';
import { retryDelay } from './retryDelay';
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
import { addUsageTo, emptyUsage, type UsageDelta, type UsageTotals } from './UsageTotals';
import { messageOf } from '../internal/messageOf';
import { plural } from '../internal/text';

import type { TurnOutcome } from './TurnOutcome';
import type { TurnResult, UnansweredToolCall } from './TurnResult';

export type { TurnOutcome };

export type { TurnResult, UnansweredToolCall } from './TurnResult';

/** What to do when `maxCostUsd` (or `maxTokens`) is set and a response's cost (or tokens) is unknown. */
export type OnUnknownCost = 'error' | 'warn' | 'ignore';

/** What a turn needs from the adapter that runs it: the same for all of an adapter's turns. */
export interface TurnSettings {
  machine: StateMachine<StateName>;
  agent: AgentLoop;
  external: readonly ExternalBudget[];
  retry: ResolvedRetry;
  cancelGraceMs: number;
  toolConcurrency: number;
  pricing: Pricing | undefined;
  onUnknownCost: OnUnknownCost;
  /** Per agent: whether the unknown-cost warning was logged already. */
  warned: { unknownCost: boolean };
  sleep: Sleep;
  random: () => number;
  clock: () => number;
  logger: AgentLogger | undefined;
  /** Set while the turn forces an ordinary cancel, so the machine logs that move at info, not warn. */
  quietCancel: { on: boolean };
  /** Whether `event` has listeners now: events nobody hears are not built. */
  hears: (event: keyof AgentEvents) => boolean;
  /** Reports an event. Never throws. */
  emit: <K extends keyof AgentEvents>(event: K, ...args: AgentEvents[K]) => void;
}

/** What a response's record notes beside its usage: malformed usage fields, an unknown cost. */
interface ResponseNotes {
  usageProblems?: readonly string[];
  unknownCost?: string;
}

type LLMOutcome =
  | { kind: 'response'; response: LLMResponse; attempts: number; failures: Attempt[]; notes: ResponseNotes | undefined }
  | { kind: 'end'; result: TurnResult };

interface Attempt {
  attempt: number;
  error: string;
  delayMs?: number;
  retryAfterMs?: number;
  noRetry?: string;
}

type ToolStatus = ToolCallEvent['status'];

interface ToolSlot {
  call: ToolCall;
  status: ToolStatus | 'running' | 'pending';
  startedAt: number;
  endedAt: number;
  result?: ToolResult;
  note?: string;
}

/** The abort reason of a turn whose wall-time deadline passed. */
class Deadline {
  constructor(readonly spent: SpentLimit) {}
}

const NO_DATA = undefined;

/** Charged before every call; budgets only read a delta. */
const ONE_LLM_CALL: UsageDelta = Object.freeze({ llmCalls: 1 });
const ONE_TOOL_CALL: UsageDelta = Object.freeze({ toolCalls: 1 });

/** What an agent without `gatherAdditionalMessages` gathers; only ever read. */
const NOTHING_GATHERED: Settled<string[]> = { kind: 'value', value: Object.freeze([]) as unknown as string[] };

/**
 * One turn through the sixteen states. Every move it asks for is legal in the table, except
 * where the table has no edge for what happened, and then the move is explicitly forced with
 * its reason: cancellation (or a passed deadline) outside CheckingForCancellation, a broken
 * contract in CheckingGitCommits or RunningAutoformatters (→ Error), and a machine moved
 * behind the adapter's back to a state with no edge to Error. Internal: `runTurn` makes one per turn.
 */
export class TurnRunner {
  readonly #s: TurnSettings;
  readonly #budgets: readonly Budget[];
  readonly #turn: number;
  readonly #controller: AbortController;
  readonly #signal: AbortSignal;
  /** Every operation of the turn is awaited through it, and abandoned after the grace once the turn aborts. */
  readonly #ops: GraceGroup;
  #moves = 0;
  /** Where this turn last put the machine; anything else means someone moved it meanwhile. */
  #expected: StateName;
  /** Charged in place; a result gets a copy. */
  readonly #turnUsage: UsageTotals = emptyUsage();
  /** When wall time was last charged: the clock's last reading. A reading costs tens of ns (Date.now, ~45 ns on the bench VM), so one is shared wherever no code of others runs between two. */
  #lastWallAt = 0;
  /** Tool calls asked for whose results no successful sendToolResults has carried yet. */
  #pending: ToolSlot[] | undefined;
  /** Texts of responses that also asked for tools; made at the first. */
  #texts: string[] | undefined;
  /** Usage not yet charged to the external budgets (they are charged at the next await). */
  #externalDue: UsageDelta | undefined;
  #deadlineTimer: ReturnType<typeof setTimeout> | undefined;
  #ended = false;
  /** A limit an external budget reported spent: it stays spent for the rest of the turn. */
  #externalSpent: SpentLimit | undefined;

  /**
   * `controller` is this turn's alone, and only `abort()` aborts it: operations get their grace
   * from there, with no listener on its signal.
   */
  constructor(settings: TurnSettings, budgets: readonly Budget[], turn: number, controller: AbortController) {
    this.#s = settings;
    this.#budgets = budgets;
    this.#expected = settings.machine.pendingState;
    this.#turn = turn;
    this.#controller = controller;
    this.#signal = controller.signal;
    this.#ops = new GraceGroup(controller.signal, settings.cancelGraceMs, settings.sleep);
  }

  /** Whether the turn was cancelled or its deadline passed. */
  get aborted(): boolean {
    return this.#signal.aborted;
  }

  /** Cancels the turn (or ends it at its deadline): the running operations get their grace. */
  abort(reason: unknown): void {
    if (this.#signal.aborted) return;
    this.#controller.abort(reason);
    this.#ops.aborted();
  }

  /** Runs the turn to a terminal state. Never throws: a failure of the adapter itself ends the turn in Error. */
  async run(input: string): Promise<TurnResult> {
    let result: TurnResult;
    try {
      // The turn's time starts now.
      this.#lastWallAt = this.#s.clock();
      this.#armDeadline();
      result = await this.#flow(input);
    } catch (error) {
      // A machine moved behind the adapter's back, or a bug of ours: say which, and end in Error —
      // legally where the table allows it, forced only where it does not.
      const machine = this.#s.machine;
      const cause = error instanceof MachineMovedError ? error : new OperationError('AgentWithStateMachine (unexpected)', error);
      try {
        if (!machine.isInTerminalState()) {
          this.#move(State.Error, { description: cause.message, data: { error: messageOf(error) } }, !machine.canMoveTo(State.Error), false);
        }
      } catch {
        // the machine refused even a forced move; the result still says why
      }
      result = this.#result('error', { error: cause });
    }
    clearTimeout(this.#deadlineTimer);
    if (this.#s.external.length > 0 && this.#externalDue !== undefined) {
      try {
        await this.#flushExternal();
      } catch (error) {
        safeLog(this.#s.logger, 'warn', `charging an external budget at the end of turn ${this.#turn} failed: ${messageOf(error)}`, { turn: this.#turn });
      }
    }
    if (this.#pending !== undefined) result = await this.#settleUnanswered(result);
    // Releases anything still listening to this turn's signal. Aborting costs microseconds
    // (an Event, a dispatch), so it is skipped when no listener is left to release.
    if (!this.#signal.aborted && getEventListeners(this.#signal, 'abort').length > 0) this.#controller.abort('turn ended');
    return result;
  }

  async #flow(input: string): Promise<TurnResult> {
    const machine = this.#s.machine;
    const current = this.#expected;
    if (current === State.Ready) this.#move(State.WaitingForUserInput, 'agent ready');
    else if (machine.table.states[current]?.isTerminal === true) this.#move(State.WaitingForUserInput, { description: `turn ${this.#turn} starts`, data: { turn: this.#turn } });
    else if (current !== State.WaitingForUserInput) {
      this.#move(State.WaitingForUserInput, `runTurn() found the machine in ${current}, not between turns`, true);
    }
    if (this.#s.hears('turnStart')) this.#s.emit('turnStart', { turn: this.#turn, input, startedAt: this.#s.clock() });

    // A turn on a spent budget or an already-cancelled signal makes no call. WaitingForUserInput
    // cannot reach BudgetExceeded or Cancelled, so the legal move is to Error, and the record's
    // data says which outcome it stands for.
    if (this.#signal.aborted && !(this.#signal.reason instanceof Deadline)) {
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
    let llm = await this.#callLLM('sendUserMessage', State.SendingToLLM, { kind: 'user_message', message: input }, (ctx) => this.#s.agent.sendUserMessage(input, ctx));
    for (;;) {
      if (llm.kind === 'end') return llm.result;
      const { response } = llm;
      // The results sent with this call reached the LLM: nothing of the last round is unanswered.
      this.#pending = undefined;
      const calls = response.toolCalls ?? [];
      // Built key by key, in this order, rather than with spreads: this runs on every response.
      const data: Record<string, unknown> = { attempts: llm.attempts };
      if (llm.failures.length > 0) data.failures = llm.failures;
      data.toolCalls = calls.length;
      if (response.model !== undefined) data.model = response.model;
      if (response.finishReason !== undefined) data.finishReason = response.finishReason;
      if (llm.notes !== undefined) {
        if (llm.notes.usageProblems !== undefined) data.usageProblems = llm.notes.usageProblems;
        if (llm.notes.unknownCost !== undefined) data.unknownCost = llm.notes.unknownCost;
      }
      data.usage = this.#budgets[0]!.usage;
      this.#move(State.ProcessingLLMResponse, { description: 'LLM responded', data });
      if (calls.length === 0) {
        if (this.#signal.aborted) return this.#cancel(State.ProcessingLLMResponse);
        this.#move(State.EndOfTurn, { description: 'text-only response ends the turn', data: { chars: response.text?.length ?? 0 } });
        return this.#result('end_of_turn', response.text === undefined ? {} : { text: response.text });
      }
      if (response.text !== undefined && response.text !== '') (this.#texts ??= []).push(response.text);
      // A slot's times are set when its call starts or is given up, before anything reads them.
      this.#pending = calls.map((call) => ({ call, status: 'pending', startedAt: 0, endedAt: 0 }));

      const callList = calls.map((c) => ({ id: c.id, name: c.name }));
      const names = namesOf(calls);
      this.#move(State.ToolUseRequested, { description: `LLM requested ${plural(calls.length, 'tool call')}: ${names}`, data: { calls: callList } });
      this.#move(State.CheckingForCancellation, 'checking for cancellation before running tools');
      if (this.#signal.aborted) {
        if (this.#signal.reason instanceof Deadline) return this.#cancel(State.CheckingForCancellation);
        const reason = this.#reason();
        this.#move(State.Cancelled, { description: `cancelled before tools ran: ${reason}`, data: { reason, interrupted: calls.map((c) => c.id) } });
        return this.#result('cancelled', { error: new TurnCancelledError(reason, State.CheckingForCancellation) });
      }
      this.#move(State.RunningTool, { description: `running ${names}`, data: this.#s.toolConcurrency === 1 ? { calls: callList } : { calls: callList, concurrency: this.#s.toolConcurrency } });
      const tools = await this.#runTools(this.#pending);
      if (tools.kind === 'end') return tools.result;
      if (this.#signal.aborted) {
        // The running tools finished or gave up; the rest were reported as interrupted.
        return this.#cancel(State.RunningTool, { results: tools.summary });
      }
      let errors = 0;
      for (const r of tools.summary) if (r.isError) errors += 1;
      this.#move(State.CheckingGitCommits, { description: `tools finished (${errors} with errors)`, data: { results: tools.summary } });

      const formatterMessages: string[] = [];
      // An operation the agent lacks is not awaited: it would only cost a promise and a tick.
      const commits = this.#s.agent.checkGitCommits == null ? { kind: 'list' as const, list: [] } : await this.#optionalList('checkGitCommits', (ctx) => this.#s.agent.checkGitCommits?.(ctx));
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
        this.#move(State.CheckingBudget, { description: 'no new commits', data: commits.failure === undefined ? NO_DATA : { gitError: commits.failure } });
      }

      const spent = this.#spent();
      if (spent !== undefined) {
        this.#move(State.BudgetExceeded, { description: spent.message, data: limitData(spent) });
        return this.#result('budget_exceeded', { error: budgetError(spent) });
      }
      if (this.#signal.aborted) return this.#cancel(State.CheckingBudget);
      this.#move(State.GatheringAdditionalMessages, { description: 'budget has room', data: { usage: this.#budgets[0]!.usage } });

      const gathered = this.#s.agent.gatherAdditionalMessages == null ? NOTHING_GATHERED : await this.#settle((ctx) => this.#s.agent.gatherAdditionalMessages?.(ctx) ?? Promise.resolve([]));
      if (gathered.kind === 'abandoned' || this.#signal.aborted) return this.#cancel(State.GatheringAdditionalMessages);
      if (gathered.kind === 'threw') {
        const error = new OperationError('gatherAdditionalMessages', gathered.error);
        this.#move(State.Error, { description: error.message, data: { error: messageOf(gathered.error) } });
        return this.#result('error', { error });
      }
      const problem = stringListProblem(gathered.value);
      if (problem !== undefined) return this.#violation('gatherAdditionalMessages', problem, gathered.value);
      // formatterMessages is this round's own array: it can be sent as it is when nothing was gathered.
      const messages = gathered === NOTHING_GATHERED ? formatterMessages : [...(gathered.value as string[]), ...formatterMessages];

      this.#move(State.SendingToolResults, {
        description: `sending ${plural(tools.results.length, 'tool result')} and ${plural(messages.length, 'message')}`,
        data: { results: tools.results.length, messages: messages.length },
      });
      const results = tools.results;
      llm = await this.#callLLM('sendToolResults', State.SendingToolResults, { kind: 'tool_results', results, messages }, (ctx) => this.#s.agent.sendToolResults(results, messages, ctx));
    }
  }

  /** One LLM call with retries; checks the budgets before each attempt and charges every one. */
  async #callLLM(
    operation: 'sendUserMessage' | 'sendToolResults',
    from: typeof State.SendingToLLM | typeof State.SendingToolResults,
    input: LLMCallInput,
    invoke: (ctx: OperationContext) => Promise<LLMResponse>,
  ): Promise<LLMOutcome> {
    const { retries, baseDelayMs, maxDelayMs, shouldRetry, delayMs } = this.#s.retry;
    const failures: Attempt[] = [];
    for (let attempt = 1; ; attempt++) {
      if (this.#signal.aborted) return { kind: 'end', result: this.#cancel(from, { failures }) };
      const spent = this.#spent() ?? (this.#s.external.length > 0 ? await this.#reserve('llm') : undefined);
      if (spent instanceof OperationError) return { kind: 'end', result: this.#fail(spent, { operation, failures }) };
      if (spent !== undefined) {
        // From a sending state the table reaches Error, not BudgetExceeded: the data says why.
        this.#move(State.Error, { description: `${spent.message}; no further LLM call made`, data: { outcome: 'budget_exceeded', ...limitData(spent), failures } });
        return { kind: 'end', result: this.#result('budget_exceeded', { error: budgetError(spent) }) };
      }
      this.#charge(ONE_LLM_CALL, false);
      // #spent() has just read the clock, unless an external budget was awaited since.
      const startedAt = this.#s.external.length === 0 ? this.#lastWallAt : this.#s.clock();
      const settled = await this.#settle(invoke, attempt);
      const endedAt = this.#s.clock();
      if (settled.kind === 'abandoned' || (settled.kind === 'threw' && this.#signal.aborted)) {
        this.#s.emit('llmAttempt', { turn: this.#turn, operation, attempt, startedAt, endedAt, input, error: settled.kind === 'threw' ? settled.error : new Error(`abandoned: ${this.#reason()}`), willRetry: false });
        return { kind: 'end', result: this.#cancel(from, { attempt, failures }) };
      }
      if (settled.kind === 'value') {
        const value: unknown = settled.value;
        // Usage the response reports was paid for, even if the rest of it is malformed.
        const reported: unknown = typeof value === 'object' && value !== null ? (value as { usage?: unknown }).usage : undefined;
        const model: unknown = typeof value === 'object' && value !== null ? (value as { model?: unknown }).model : undefined;
        const { valid, problems } = splitUsage(reported);
        const priced = this.#price(valid, typeof model === 'string' ? model : undefined, operation);
        this.#charge({ inputTokens: valid.inputTokens ?? 0, outputTokens: valid.outputTokens ?? 0, costUsd: priced.costUsd ?? 0 });
        const problem = llmResponseProblem(value);
        // Whether code of others (pricing, a logger, listeners) may have run since endedAt was read.
        let othersRan = valid.costUsd === undefined || problems.length > 0;
        if (this.#s.hears('llmAttempt')) {
          othersRan = true;
          const usage: Usage = priced.costUsd === undefined || priced.costUsd === valid.costUsd ? valid : { ...valid, costUsd: priced.costUsd };
          this.#s.emit('llmAttempt', {
            turn: this.#turn, operation, attempt, startedAt, endedAt, input,
            ...(problem === undefined ? { response: value as LLMResponse } : { error: new ContractViolationError(operation, problem, value) }),
            willRetry: false, usage,
          });
        }
        if (problems.length > 0) safeLog(this.#s.logger, 'warn', `${operation} reported malformed usage (charged its valid fields): ${problems.join('; ')}`, { turn: this.#turn });
        // Without external budgets there is nothing to wait for: only the wall time to charge.
        let external: SpentLimit | OperationError | undefined;
        if (this.#s.external.length === 0) this.#chargeWall(othersRan ? this.#s.clock() : endedAt);
        else external = await this.#flushExternalChecked(operation);
        if (external instanceof OperationError) return { kind: 'end', result: this.#fail(external, { operation }) };
        if (problem !== undefined) return { kind: 'end', result: this.#violation(operation, problem, value) };
        if (priced.error !== undefined) return { kind: 'end', result: this.#fail(priced.error, { operation, usage: valid }) };
        let notes: ResponseNotes | undefined;
        if (problems.length > 0) notes = { usageProblems: problems };
        if (priced.note !== undefined) (notes ??= {}).unknownCost = priced.note;
        return { kind: 'response', response: value as LLMResponse, attempts: attempt, failures, notes };
      }
      const failure: Attempt = { attempt, error: messageOf(settled.error) };
      failures.push(failure);
      let retry: boolean;
      try {
        retry = attempt <= retries && shouldRetry(settled.error) === true;
      } catch (predicateError) {
        this.#s.emit('llmAttempt', { turn: this.#turn, operation, attempt, startedAt, endedAt, input, error: settled.error, willRetry: false });
        return { kind: 'end', result: this.#fail(new OperationError('retry.shouldRetry', predicateError), { operation, failures }) };
      }
      let wait = 0;
      if (retry) {
        const planned = this.#retryWait(settled.error, attempt, baseDelayMs, maxDelayMs, delayMs);
        if (planned.kind === 'error') {
          this.#s.emit('llmAttempt', { turn: this.#turn, operation, attempt, startedAt, endedAt, input, error: settled.error, willRetry: false });
          return { kind: 'end', result: this.#fail(planned.error, { operation, failures }) };
        }
        if (planned.retryAfterMs !== undefined) failure.retryAfterMs = planned.retryAfterMs;
        if (planned.kind === 'no') {
          failure.noRetry = planned.why;
          retry = false;
        } else wait = planned.ms;
      }
      this.#s.emit('llmAttempt', { turn: this.#turn, operation, attempt, startedAt, endedAt, input, error: settled.error, willRetry: retry });
      if (!retry) {
        const error = new LLMCallError(operation, failures, settled.error);
        this.#move(State.Error, { description: error.message, data: { operation, failures } });
        return { kind: 'end', result: this.#result('error', { error }) };
      }
      failure.delayMs = wait;
      safeLog(this.#s.logger, 'warn', `${operation} attempt ${attempt} failed (${failure.error}); retrying in ${wait} ms`, { turn: this.#turn });
      await this.#s.sleep(wait, this.#signal);
    }
  }

  #retryWait(
    error: unknown,
    attempt: number,
    baseDelayMs: number,
    maxDelayMs: number,
    override: ResolvedRetry['delayMs'],
  ): { kind: 'wait'; ms: number; retryAfterMs?: number } | { kind: 'no'; why: string; retryAfterMs?: number } | { kind: 'error'; error: OperationError } {
    if (override !== undefined) {
      let ms: unknown;
      try {
        ms = override(error, attempt);
      } catch (thrown) {
        return { kind: 'error', error: new OperationError('retry.delayMs', thrown) };
      }
      if (ms !== undefined) {
        if (!(typeof ms === 'number' && Number.isFinite(ms) && ms >= 0)) return { kind: 'error', error: new OperationError('retry.delayMs', new Error(`returned ${String(ms)}, expected a non-negative number of ms or undefined`)) };
        return { kind: 'wait', ms };
      }
    }
    const backoff = retryDelay(attempt, baseDelayMs, maxDelayMs, this.#s.random);
    const asked = retryAfterMs(error, this.#s.clock());
    if (asked === undefined) return { kind: 'wait', ms: backoff };
    if (asked > maxDelayMs) return { kind: 'no', why: `the server asked to wait ${asked} ms (Retry-After), longer than retry.maxDelayMs ${maxDelayMs}`, retryAfterMs: asked };
    return { kind: 'wait', ms: Math.max(backoff, Math.ceil(asked)), retryAfterMs: asked };
  }

  /** The cost of one response: reported, priced, or unknown — which is an error when a cost cap is set, unless allowed. */
  #price(usage: Usage, model: string | undefined, operation: string): { costUsd?: number; error?: OperationError; note?: string } {
    let costUsd = usage.costUsd;
    if (costUsd === undefined && this.#s.pricing !== undefined) {
      let priced: unknown;
      try {
        priced = this.#s.pricing(usage, { model });
      } catch (error) {
        return { error: new OperationError('pricing', error) };
      }
      if (priced !== undefined && !(typeof priced === 'number' && Number.isFinite(priced) && priced >= 0)) {
        return { error: new OperationError('pricing', new Error(`returned ${String(priced)} for model ${model ?? '(none)'}, expected a non-negative number of USD or undefined`)) };
      }
      costUsd = priced as number | undefined;
    }
    const tokens = usage.inputTokens !== undefined || usage.outputTokens !== undefined;
    const capped = (key: 'maxCostUsd' | 'maxTokens'): boolean => this.#budgets.some((b) => b.limits[key] !== undefined);
    let unknown: string | undefined;
    if (costUsd === undefined && capped('maxCostUsd')) {
      const what = tokens ? `${(usage.inputTokens ?? 0) + (usage.outputTokens ?? 0)} tokens (${usage.inputTokens ?? '?'} in, ${usage.outputTokens ?? '?'} out)` : 'no tokens';
      unknown = `${operation} reported ${what} but no costUsd for model ${model ?? '(not reported)'}, and ${this.#s.pricing === undefined ? 'no pricing option is set' : 'pricing returned undefined'}: maxCostUsd cannot be enforced`;
    } else if (!tokens && capped('maxTokens')) {
      unknown = `${operation} reported no tokens (model ${model ?? '(not reported)'}): maxTokens cannot be enforced`;
    }
    const result: { costUsd?: number; error?: OperationError; note?: string } = costUsd === undefined ? {} : { costUsd };
    if (unknown === undefined || this.#s.onUnknownCost === 'ignore') return result;
    if (this.#s.onUnknownCost === 'error') {
      result.error = new OperationError('cost', new Error(`${unknown} (set pricing, or onUnknownCost: 'warn' or 'ignore')`));
      return result;
    }
    result.note = unknown;
    if (!this.#s.warned.unknownCost) {
      this.#s.warned.unknownCost = true;
      safeLog(this.#s.logger, 'warn', unknown, { turn: this.#turn });
    }
    return result;
  }

  /** Runs the response's tool calls, up to `toolConcurrency` at once, results in call order. */
  async #runTools(
    slots: ToolSlot[],
  ): Promise<{ kind: 'done'; results: ToolResult[]; summary: Array<{ callId: string; name: string; isError: boolean; ms: number; note?: string }> } | { kind: 'end'; result: TurnResult }> {
    let next = 0;
    let stop: { why: string; status: 'not_run' } | undefined;
    let violation: { operation: string; problem: string; value: unknown } | undefined;
    let failed: OperationError | undefined;
    const emitTool = (slot: ToolSlot): void => {
      if (slot.result !== undefined && slot.status !== 'pending' && slot.status !== 'running') {
        if (this.#s.hears('toolCall')) this.#s.emit('toolCall', { turn: this.#turn, call: slot.call, status: slot.status, startedAt: slot.startedAt, endedAt: slot.endedAt, result: slot.result });
      }
    };
    const worker = async (): Promise<void> => {
      while (next < slots.length && stop === undefined && violation === undefined && failed === undefined) {
        if (this.#signal.aborted) return;
        const spent = this.#spent() ?? (this.#s.external.length > 0 ? await this.#reserve('tool') : undefined);
        if (spent instanceof OperationError) {
          failed = spent;
          return;
        }
        if (spent !== undefined) {
          stop = { why: `not run: ${spent.message}`, status: 'not_run' };
          return;
        }
        if (this.#signal.aborted || next >= slots.length) return;
        const slot = slots[next++]!;
        // Counted when it starts, before any await: concurrent workers never pass maxToolCalls.
        this.#charge(ONE_TOOL_CALL, false);
        slot.status = 'running';
        // As for an LLM call: #spent() has just read the clock, unless an external budget was awaited since.
        slot.startedAt = this.#s.external.length === 0 ? this.#lastWallAt : this.#s.clock();
        const settled = await this.#settle((ctx) => this.#s.agent.runTool(slot.call, ctx));
        slot.endedAt = Math.max(slot.startedAt, this.#s.clock());
        if (settled.kind === 'abandoned') {
          slot.status = 'interrupted';
          slot.note = `interrupted: ${this.#reason()} (the tool did not stop within ${this.#s.cancelGraceMs} ms)`;
          slot.result = { callId: slot.call.id, output: slot.note, isError: true };
        } else if (settled.kind === 'threw') {
          if (this.#signal.aborted) {
            slot.status = 'interrupted';
            slot.note = `interrupted: ${this.#reason()}`;
          } else {
            // As every agent framework does: the LLM sees the failure and decides what to do.
            slot.status = 'error';
            slot.note = messageOf(settled.error);
          }
          slot.result = { callId: slot.call.id, output: slot.status === 'error' ? slot.note : slot.note, isError: true };
        } else {
          const problem = toolResultProblem(settled.value, slot.call);
          if (problem !== undefined) {
            violation ??= { operation: `runTool(${slot.call.name})`, problem, value: settled.value };
            slot.status = 'interrupted';
            slot.note = `interrupted: runTool broke its contract: ${problem}`;
            slot.result = { callId: slot.call.id, output: slot.note, isError: true };
          } else {
            slot.result = settled.value;
            slot.status = settled.value.isError === true ? 'error' : 'ok';
          }
        }
        emitTool(slot);
      }
    };
    const width = Math.min(this.#s.toolConcurrency, slots.length);
    if (width <= 1) await worker();
    else await Promise.all(Array.from({ length: width }, () => worker()));

    for (const slot of slots) {
      if (slot.result !== undefined) continue;
      const why = stop?.why ?? (this.#signal.aborted ? `interrupted: ${this.#reason()}` : `not run: ${failed?.message ?? violation?.problem ?? 'the turn ended'}`);
      slot.status = why.startsWith('interrupted') ? 'interrupted' : 'not_run';
      slot.note = why;
      slot.result = { callId: slot.call.id, output: why, isError: true };
      slot.startedAt = slot.endedAt = this.#s.clock();
      emitTool(slot);
    }
    if (failed !== undefined) return { kind: 'end', result: this.#fail(failed, { operation: 'runTool' }) };
    if (violation !== undefined) return { kind: 'end', result: this.#violation(violation.operation, violation.problem, violation.value) };
    const summary = slots.map((s) => {
      const line: { callId: string; name: string; isError: boolean; ms: number; note?: string } = {
        callId: s.call.id,
        name: s.call.name,
        isError: s.result!.isError === true,
        ms: Math.max(0, s.endedAt - s.startedAt),
      };
      if (s.note !== undefined && s.status !== 'ok') line.note = s.note;
      return line;
    });
    return { kind: 'done', results: slots.map((s) => s.result!), summary };
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
      safeLog(this.#s.logger, 'warn', `${operation} failed: ${failure}; going on without it`, { turn: this.#turn });
      return { kind: 'list', list: [], failure };
    }
    const problem = stringListProblem(settled.value, allowVoid);
    if (problem !== undefined) return { kind: 'end', result: this.#violation(operation, problem, settled.value) };
    return { kind: 'list', list: (settled.value ?? []) as string[] };
  }

  /**
   * Awaits an operation; on cancellation (or a passed deadline), gives it `cancelGraceMs` to
   * finish or abort through its signal, then abandons it so that a tool ignoring the signal
   * cannot hang the turn.
   */
  #settle<T>(op: (ctx: OperationContext) => Promise<T> | T, attempt?: number): Promise<Settled<T>> {
    let started: Promise<T> | T;
    try {
      started = op(attempt === undefined ? { signal: this.#signal, turn: this.#turn } : { signal: this.#signal, turn: this.#turn, attempt });
    } catch (error) {
      return Promise.resolve({ kind: 'threw', error });
    }
    return this.#ops.settle(started);
  }

  /**
   * The tool calls whose results never reached the LLM get an answer: `settleToolCalls` once,
   * with the cancel grace, else `unansweredToolCalls` in the result. Never changes the outcome.
   */
  async #settleUnanswered(result: TurnResult): Promise<TurnResult> {
    const pending = this.#pending;
    this.#pending = undefined;
    if (pending === undefined || result.outcome === 'end_of_turn') return result;
    const reason = result.error?.message ?? result.outcome;
    const unanswered: UnansweredToolCall[] = pending.map((slot) => ({
      call: slot.call,
      result: slot.result ?? { callId: slot.call.id, output: `not run: ${reason}`, isError: true },
    }));
    for (const slot of pending) {
      if (slot.result === undefined && this.#s.hears('toolCall')) {
        const at = this.#s.clock();
        this.#s.emit('toolCall', { turn: this.#turn, call: slot.call, status: 'not_run', startedAt: at, endedAt: at, result: { callId: slot.call.id, output: `not run: ${reason}`, isError: true } });
      }
    }
    const settle = this.#s.agent.settleToolCalls;
    if (typeof settle !== 'function') return { ...result, unansweredToolCalls: unanswered };
    const info: SettleInfo = { outcome: result.outcome, reason, turn: this.#turn };
    const results = unanswered.map((u) => u.result);
    // A cancelled turn's signal has fired already: the operation gets the grace at once. Otherwise
    // it gets the grace as its whole time, so that settling never hangs a turn.
    const stopper = new AbortController();
    const signal = this.#signal.aborted ? this.#signal : stopper.signal;
    if (!this.#signal.aborted) void this.#s.sleep(this.#s.cancelGraceMs, this.#signal).then(() => stopper.abort(`settleToolCalls did not finish within ${this.#s.cancelGraceMs} ms`));
    const settled = await settleWithGrace(() => settle.call(this.#s.agent, results, info, { signal, turn: this.#turn }), signal, this.#s.cancelGraceMs, this.#s.sleep);
    if (settled.kind === 'value') return result;
    const error = new OperationError('settleToolCalls', settled.kind === 'threw' ? settled.error : new Error(`did not finish within the ${this.#s.cancelGraceMs} ms grace`));
    safeLog(this.#s.logger, 'warn', `${error.message}; the tool calls stay unanswered (TurnResult.unansweredToolCalls)`, { turn: this.#turn });
    return { ...result, unansweredToolCalls: unanswered, settleError: error };
  }

  /** Every move of the turn goes through here; `forced` only where the table has no edge. */
  #move(to: StateName, event: TransitionEvent, forced = false, check = true): void {
    const machine = this.#s.machine;
    // Never ask for a move from a state we did not put the machine in: it would be illegal.
    // The machine validates against its queued tail (a listener's moves wait their turn), so compare with that.
    const tail = machine.pendingState;
    if (check && tail !== this.#expected) throw new MachineMovedError(this.#expected, tail, this.#turn);
    if (forced) machine.forceTransition(to, event);
    else machine.transition(to, event);
    this.#moves += 1;
    this.#expected = to;
  }

  /**
   * Cancellation outside CheckingForCancellation: the table has no edge, so the move is forced,
   * with the reason. A passed deadline ends the turn the same way, as budget_exceeded.
   */
  #cancel(from: StateName, data: Record<string, unknown> = {}): TurnResult {
    const reason: unknown = this.#signal.reason;
    if (reason instanceof Deadline) {
      const spent = reason.spent;
      const to = this.#s.machine.canMoveTo(State.BudgetExceeded) ? State.BudgetExceeded : State.Error;
      this.#move(to, { description: `${spent.message} (deadline passed during ${from})`, data: { outcome: 'budget_exceeded', ...limitData(spent), ...data } }, to === State.BudgetExceeded ? false : !this.#s.machine.canMoveTo(State.Error));
      return this.#result('budget_exceeded', { error: budgetError(spent) });
    }
    const text = this.#reason();
    this.#s.quietCancel.on = true;
    try {
      this.#move(State.Cancelled, { description: `cancelled during ${from}: ${text}`, data: { reason: text, ...data } }, true);
    } finally {
      this.#s.quietCancel.on = false;
    }
    return this.#result('cancelled', { error: new TurnCancelledError(text, from) });
  }

  #violation(operation: string, problem: string, value: unknown): TurnResult {
    const error = new ContractViolationError(operation, problem, value);
    // Most states reach Error legally; CheckingGitCommits and RunningAutoformatters do not, so there the move is forced.
    this.#move(State.Error, { description: error.message, data: { operation, problem } }, !this.#s.machine.canMoveTo(State.Error));
    return this.#result('error', { error });
  }

  #fail(error: OperationError, data: Record<string, unknown>): TurnResult {
    this.#move(State.Error, { description: error.message, data }, !this.#s.machine.canMoveTo(State.Error));
    return this.#result('error', { error });
  }

  #reason(): string {
    const reason: unknown = this.#signal.reason;
    if (reason instanceof Deadline) return reason.spent.message;
    // A bare abort() gives a DOMException, which need not be `instanceof Error` across realms.
    if (typeof reason === 'object' && reason !== null && (reason as { name?: unknown }).name === 'AbortError') return 'aborted by the caller\'s signal';
    return reason === undefined ? 'cancelled' : messageOf(reason);
  }

  #charge(delta: UsageDelta, external = true): void {
    addUsageTo(this.#turnUsage, delta);
    for (const budget of this.#budgets) budget.charge(delta);
    // Call counts reach external budgets through reserve(); the rest is charged at the next await.
    if (external && this.#s.external.length > 0) this.#externalDue = this.#externalDue === undefined ? { ...delta } : sumDelta(this.#externalDue, delta);
  }

  /** Asks every external budget to start one call. */
  async #reserve(kind: 'llm' | 'tool'): Promise<SpentLimit | OperationError | undefined> {
    const flushed = await this.#flushExternalChecked(kind === 'llm' ? 'LLM call' : 'tool call');
    if (flushed !== undefined) return flushed;
    for (const [i, budget] of this.#s.external.entries()) {
      try {
        const spent = await budget.reserve(kind);
        if (spent !== undefined) return (this.#externalSpent ??= spent);
      } catch (error) {
        return new OperationError(`externalBudgets[${i}].reserve('${kind}')`, error);
      }
    }
    return undefined;
  }

  /** Charges due usage to the external budgets; a limit they report spent is returned, a failure too. */
  async #flushExternalChecked(what: string): Promise<SpentLimit | OperationError | undefined> {
    try {
      return await this.#flushExternal();
    } catch (error) {
      return error instanceof OperationError ? error : new OperationError(`externalBudgets charge after ${what}`, error);
    }
  }

  async #flushExternal(): Promise<SpentLimit | undefined> {
    this.#chargeWall();
    const delta = this.#externalDue;
    this.#externalDue = undefined;
    if (delta === undefined) return undefined;
    let first: SpentLimit | undefined;
    for (const [i, budget] of this.#s.external.entries()) {
      try {
        const spent = await budget.charge(delta);
        first ??= spent;
        this.#externalSpent ??= spent;
      } catch (error) {
        throw new OperationError(`externalBudgets[${i}].charge`, error);
      }
    }
    return first;
  }

  /** Charges the wall time since the last check, then returns the first spent limit of any budget. */
  #spent(): SpentLimit | undefined {
    this.#chargeWall();
    if (this.#externalSpent !== undefined) return this.#externalSpent;
    for (const budget of this.#budgets) {
      const spent = budget.spent();
      if (spent !== undefined) return spent;
    }
    return undefined;
  }

  /** `now` may be a reading just taken, when no code of others ran since. */
  #chargeWall(now = this.#s.clock()): void {
    const elapsed = Math.max(0, now - this.#lastWallAt);
    this.#lastWallAt = now;
    if (elapsed > 0) this.#charge({ wallMs: elapsed });
  }

  /**
   * `maxWallMs` is a deadline: a timer fires when the first budget's wall time would run out,
   * checks the clock, and aborts the turn's signal with the spent limit (operations get their
   * grace), so a stalled call cannot outlast it.
   */
  /** Call it with the wall time charged up to now. */
  #armDeadline(): void {
    let remaining = Infinity;
    for (const budget of this.#budgets) {
      const max = budget.limits.maxWallMs;
      if (max !== undefined) remaining = Math.min(remaining, max - budget.usage.wallMs);
    }
    if (remaining === Infinity || this.#ended) return;
    this.#deadlineTimer = setTimeout(() => {
      if (this.#ended || this.#signal.aborted) return;
      this.#chargeWall();
      for (const budget of this.#budgets) {
        const max = budget.limits.maxWallMs;
        const spent = max === undefined ? undefined : spentLimit(budget.usage, { maxWallMs: max }, budget.label);
        if (spent !== undefined) return this.abort(new Deadline(spent));
      }
      // An injected clock that has not reached the deadline yet: look again later.
      this.#armDeadline();
    }, Math.min(Math.max(1, Math.ceil(remaining)), 2 ** 31 - 1));
    // The timer must not keep a process alive on its own.
    (this.#deadlineTimer as { unref?: () => void }).unref?.();
  }

  #result(outcome: TurnOutcome, extra: { text?: string; error?: TurnError }): TurnResult {
    this.#chargeWall();
    this.#ended = true;
    clearTimeout(this.#deadlineTimer);
    const result = { outcome } as TurnResult;
    if ('text' in extra) result.text = extra.text;
    if ('error' in extra) result.error = extra.error;
    result.usage = { ...this.#turnUsage };
    result.turn = this.#turn;
    result.transitions = this.#moves;
    if (this.#texts !== undefined) result.texts = this.#texts;
    return result;
  }
}

/** `a, b, c`: the names of the calls, for descriptions. */
function namesOf(calls: readonly ToolCall[]): string {
  let names = calls[0]?.name ?? '';
  for (let i = 1; i < calls.length; i++) names += `, ${calls[i]!.name}`;
  return names;
}

function sumDelta(a: UsageDelta, b: UsageDelta): UsageDelta {
  const out: UsageDelta = { ...a };
  for (const key of Object.keys(b) as Array<keyof UsageDelta>) out[key] = (out[key] ?? 0) + (b[key] ?? 0);
  return out;
}

function limitData(spent: SpentLimit): { limit: string; used: number; max: number } {
  return { limit: spent.limit, used: spent.used, max: spent.max };
}

function budgetError(spent: SpentLimit): BudgetExceededError {
  return new BudgetExceededError(spent.message, spent.limit, spent.used, spent.max);
}
