import type { Logger } from 'winston';
import type { StateName } from '../../states/StateName';
import type { AgentLoop } from './AgentLoop';
import { Budget } from './Budget';
import type { BudgetLimits } from './BudgetLimits';
import { getDefaultLogger } from '../machine/defaultLogger';
import { InvalidArgumentError } from '../machine/InvalidArgumentError';
import type { RetryOptions } from './retryDelay';
import { sleep as realSleep, type Sleep } from '../internal/sleep';
import { StateMachine, type StateMachineOptions } from '../machine/StateMachine';
import { TurnInProgressError } from './TurnInProgressError';
import { TurnRunner, type TurnResult } from './TurnRunner';
import type { UsageTotals } from './UsageTotals';

/** Options of `new AgentWithStateMachine(loop, options)`: the machine's options plus budgets, retries and cancellation grace. */
export interface AgentWithStateMachineOptions extends Omit<StateMachineOptions<StateName>, 'table'> {
  /** This agent's own limits, over all its turns. */
  budget?: BudgetLimits;
  /** Further budgets charged alongside this agent's own, e.g. a batch's shared pool. */
  sharedBudgets?: readonly Budget[];
  /** Retries of a failed LLM call, with exponential backoff and jitter. Default 2 retries from 500 ms. */
  retry?: RetryOptions;
  /** After cancellation, how long a running operation may take to stop before it is abandoned. Default 2,000 ms. */
  cancelGraceMs?: number;
  /** How the adapter waits (backoff, grace). Tests pass one that does not really wait. */
  sleep?: Sleep;
  /** Source of jitter, [0, 1). Default Math.random. */
  random?: () => number;
}

/** Options of one `runTurn(input, options)` call: an abort signal that cancels this turn. */
export interface RunTurnOptions {
  /** Cancels the turn when it aborts, as `cancel()` does. */
  signal?: AbortSignal;
}

const REQUIRED = ['sendUserMessage', 'sendToolResults', 'runTool'] as const;
const OPTIONAL = ['checkGitCommits', 'runAutoformatters', 'gatherAdditionalMessages'] as const;

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
  readonly #agent: AgentLoop;
  readonly #budget: Budget;
  readonly #sharedBudgets: readonly Budget[];
  readonly #retry: Required<RetryOptions>;
  readonly #cancelGraceMs: number;
  readonly #sleep: Sleep;
  readonly #random: () => number;
  readonly #clock: () => number;
  readonly #logger: Logger | undefined;
  #turns = 0;
  #active: AbortController | undefined;

  constructor(agent: AgentLoop, options: AgentWithStateMachineOptions = {}) {
    assertAgentLoop(agent);
    if (typeof options !== 'object' || options === null) throw new InvalidArgumentError('options', 'an object', options);
    const { budget, sharedBudgets = [], retry = {}, cancelGraceMs = 2000, sleep = realSleep, random = Math.random, ...machineOptions } = options;
    this.#budget = new Budget(budget ?? {}, { label: 'budget' });
    if (!Array.isArray(sharedBudgets) || !sharedBudgets.every((b) => b instanceof Budget)) {
      throw new InvalidArgumentError('sharedBudgets', 'an array of Budget', sharedBudgets);
    }
    this.#retry = resolveRetry(retry);
    assertNonNegative(cancelGraceMs, 'cancelGraceMs');
    if (typeof sleep !== 'function') throw new InvalidArgumentError('sleep', 'a function (ms, signal) => Promise<void>', sleep);
    if (typeof random !== 'function') throw new InvalidArgumentError('random', 'a function returning [0, 1)', random);
    this.machine = new StateMachine<StateName>(machineOptions);
    this.#agent = agent;
    this.#sharedBudgets = sharedBudgets;
    this.#cancelGraceMs = cancelGraceMs;
    this.#sleep = sleep;
    this.#random = random;
    this.#clock = machineOptions.clock ?? Date.now;
    this.#logger = machineOptions.logger === false ? undefined : (machineOptions.logger ?? getDefaultLogger());
  }

  /** Usage over all turns so far. */
  get usage(): UsageTotals {
    return this.#budget.usage;
  }

  /** The limits of this agent's own budget. */
  get budget(): BudgetLimits {
    return this.#budget.limits;
  }

  /** Whether a turn is running now. */
  get running(): boolean {
    return this.#active !== undefined;
  }

  /**
   * Runs one turn for `input` (the user's message) to its end and says how it ended. It does
   * not throw for what happens inside the turn — failures, cancellation and budgets are
   * outcomes, with `error` saying why; it throws only for misuse (a non-string input, a turn
   * already running).
   */
  async runTurn(input: string, options: RunTurnOptions = {}): Promise<TurnResult> {
    if (typeof input !== 'string') throw new InvalidArgumentError('input', 'a string (the user message)', input);
    const { signal } = options;
    if (signal !== undefined && !(signal instanceof AbortSignal)) throw new InvalidArgumentError('signal', 'an AbortSignal', signal);
    if (this.#active !== undefined) throw new TurnInProgressError(this.#turns, this.machine.current);

    const controller = new AbortController();
    const forward = (): void => controller.abort(signal?.reason);
    if (signal?.aborted) forward();
    else signal?.addEventListener('abort', forward, { once: true });
    this.#active = controller;
    this.#turns += 1;
    try {
      const runner = new TurnRunner(
        {
          machine: this.machine,
          agent: this.#agent,
          budgets: [this.#budget, ...this.#sharedBudgets],
          retry: this.#retry,
          cancelGraceMs: this.#cancelGraceMs,
          sleep: this.#sleep,
          random: this.#random,
          clock: this.#clock,
          logger: this.#logger,
        },
        this.#turns,
        controller,
      );
      return await runner.run(input);
    } finally {
      signal?.removeEventListener('abort', forward);
      this.#active = undefined;
    }
  }

  /**
   * Cancels the running turn: no further tool starts, the running operation gets its signal
   * (and `cancelGraceMs` to stop), and the turn ends as `cancelled`. Returns whether a turn
   * was running. The next turn runs normally.
   */
  cancel(reason = 'cancelled by the caller'): boolean {
    if (typeof reason !== 'string') throw new InvalidArgumentError('reason', 'a string', reason);
    if (this.#active === undefined || this.#active.signal.aborted) return false;
    this.#active.abort(reason);
    return true;
  }
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
    if (op !== undefined && typeof op !== 'function') throw new InvalidArgumentError(`agent.${name}`, 'a function or undefined', op);
  }
}

function assertNonNegative(value: unknown, name: string): asserts value is number {
  if (!(typeof value === 'number' && Number.isFinite(value) && value >= 0)) {
    throw new InvalidArgumentError(name, 'a non-negative finite number', value);
  }
}

function resolveRetry(retry: unknown): Required<RetryOptions> {
  if (typeof retry !== 'object' || retry === null) throw new InvalidArgumentError('retry', 'an object { retries?, baseDelayMs?, maxDelayMs?, shouldRetry? }', retry);
  const { retries = 2, baseDelayMs = 500, maxDelayMs = 30_000, shouldRetry = () => true } = retry as RetryOptions;
  if (!(Number.isInteger(retries) && retries >= 0)) throw new InvalidArgumentError('retry.retries', 'a non-negative integer', retries);
  assertNonNegative(baseDelayMs, 'retry.baseDelayMs');
  assertNonNegative(maxDelayMs, 'retry.maxDelayMs');
  if (typeof shouldRetry !== 'function') throw new InvalidArgumentError('retry.shouldRetry', 'a function (error) => boolean', shouldRetry);
  return { retries, baseDelayMs, maxDelayMs, shouldRetry };
}
