import { State, type StateName } from '../../states/StateName';
import type { ForcedLogLevel } from '../machine/TransitionRecord';
import type { Budget } from './Budget';
import type { PendingApproval } from './ApprovalGate';
import type { SpentLimit } from './BudgetLimits';
import type { LLMOutcome } from './callLLM';
import { ContractViolationError, MachineMovedError, TurnCancelledError, type TurnError } from './TurnError';
import type { TurnOutcome } from './TurnOutcome';
import type { TurnResult } from './TurnResult';
import type { TurnScope, TurnSettings } from './TurnScope';
import { budgetError, limitData } from './spentRecord';

const NORMAL = Object.freeze({});

/**
 * The moves of one turn: every move goes through `move`, which never asks for a move from a
 * state the turn did not put the machine in, and the move that ends the turn (`end` and its
 * kinds) makes the turn's result.
 */
export class TurnMoves {
  readonly #s: TurnSettings;
  readonly #scope: TurnScope;
  /** The agent's own budget: records carry its usage. */
  readonly #own: Budget;
  readonly #turn: number;
  #moves = 0;
  /** Where this turn last put the machine; anything else means someone moved it meanwhile. */
  #expected: StateName;
  /** Texts of responses that also asked for tools; made at the first. */
  texts: string[] | undefined;

  constructor(settings: TurnSettings, scope: TurnScope, own: Budget, turn: number) {
    this.#s = settings;
    this.#scope = scope;
    this.#own = own;
    this.#turn = turn;
    this.#expected = settings.machine.pendingState;
  }

  /** Where this turn last put the machine. */
  get expected(): StateName {
    return this.#expected;
  }

  /** What the caller gets while the turn waits for approval: the turn so far, not ended. */
  paused(requests: PendingApproval[]): TurnResult {
    const { meter } = this.#scope;
    const result: TurnResult = {
      outcome: 'awaiting_approval',
      usage: meter.usage,
      turn: this.#turn,
      transitions: this.#moves,
      pendingApprovals: requests,
    };
    if (this.texts !== undefined) result.texts = [...this.texts];
    return result;
  }

  /** What the caller gets while the turn waits at a pausing shared cap: the turn so far, not ended. */
  pausedAtCap(spent: SpentLimit): TurnResult {
    const result: TurnResult = {
      outcome: 'awaiting_budget',
      usage: this.#scope.meter.usage,
      turn: this.#turn,
      transitions: this.#moves,
      awaitingBudget: { ...spent },
    };
    if (this.texts !== undefined) result.texts = [...this.texts];
    return result;
  }

  /** The move after an LLM call that ends the turn: aborted, refused by a budget, or failed. */
  endCall(llm: Exclude<LLMOutcome, { kind: 'response' }>, from: StateName): TurnResult {
    if (llm.kind === 'aborted') return this.cancel(from, llm.data);
    if (llm.kind === 'failed') return this.failed(llm.error, llm.data);
    // From a sending state the table reaches Error, not BudgetExceeded: the data says why.
    const { spent } = llm;
    return this.end(
      State.Error,
      `${spent.message}; no further LLM call made`,
      { ...limitData(spent), failures: llm.failures },
      'budget_exceeded',
      { error: budgetError(spent) },
    );
  }

  /** Every move of the turn goes through here; `forced` only where the table has no edge. */
  move(
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
  end(
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
    this.move(to, event, how);
    return this.result(outcome, extra);
  }

  /**
   * Cancellation outside CheckingForCancellation: the table has no edge, so the move is forced,
   * with the reason, and logged at info (an ordinary cancel is news, not a fault). A passed
   * deadline ends the turn the same way, as budget_exceeded.
   */
  cancel(from: StateName, data: Record<string, unknown> = {}): TurnResult {
    const machine = this.#s.machine;
    const spent = this.#scope.deadline;
    if (spent !== undefined) {
      const to = machine.canMoveTo(State.BudgetExceeded) ? State.BudgetExceeded : State.Error;
      const forced = to === State.BudgetExceeded ? false : !machine.canMoveTo(State.Error);
      return this.end(
        to,
        `${spent.message} (deadline passed during ${from})`,
        { ...limitData(spent), ...data },
        'budget_exceeded',
        { error: budgetError(spent) },
        { forced },
      );
    }
    const text = this.#scope.reason();
    return this.end(
      State.Cancelled,
      `cancelled during ${from}: ${text}`,
      { reason: text, ...data },
      'cancelled',
      { error: new TurnCancelledError(text, from) },
      { forced: true, logLevel: 'info' },
    );
  }

  violation(operation: string, problem: string, value: unknown): TurnResult {
    return this.failed(new ContractViolationError(operation, problem, value), { operation, problem });
  }

  /** Ends the turn in Error. Most states reach Error legally; CheckingGitCommits and RunningAutoformatters do not, so there the move is forced. */
  failed(error: TurnError, data: Record<string, unknown>): TurnResult {
    return this.end(
      State.Error,
      error.message,
      data,
      'error',
      { error },
      { forced: !this.#s.machine.canMoveTo(State.Error) },
    );
  }

  result(outcome: TurnOutcome, extra: { text?: string; error?: TurnError }): TurnResult {
    const { meter } = this.#scope;
    meter.chargeWall();
    meter.stop();
    const result = { outcome } as TurnResult;
    if ('text' in extra) result.text = extra.text;
    if ('error' in extra) result.error = extra.error;
    result.usage = meter.usage;
    result.turn = this.#turn;
    result.transitions = this.#moves;
    if (this.texts !== undefined) result.texts = this.texts;
    return result;
  }
}
