import { State, type StateName } from '../../../states/StateName';
import type { Budget } from '../money/Budget';
import type { PendingApproval } from '../ApprovalGate';
import type { SpentLimit } from '../BudgetLimits';
import type { LLMOutcome } from '../calls/callLLM';
import { ContractViolationError } from '../TurnError';
import { TurnCore, type EndExtra } from '../turn/TurnCore';
import type { TurnOutcome } from '../TurnOutcome';
import type { TurnResult } from '../TurnResult';
import type { TurnScope, TurnSettings } from '../turn/TurnScope';
import type { UsageMeter } from '../money/UsageMeter';
import type { UsageTotals } from '../UsageTotals';

/**
 * The moves of one turn of the adapter, which calls the loop: the run's core (`TurnCore`:
 * start, end, cancel, budget, stall, failure) on the turn's scope, plus what only a called loop
 * has: the result while the turn waits (for approval or a raise), a broken contract, and the end
 * of a call that made no response.
 */
export class TurnMoves extends TurnCore {
  readonly #scope: TurnScope;
  /** The agent's own budget: records carry its usage. */
  readonly #own: Budget;

  constructor(settings: TurnSettings, scope: TurnScope, own: Budget, turn: number) {
    super(settings.machine, turn, true);
    this.#scope = scope;
    this.#own = own;
  }

  protected runSignal(): AbortSignal {
    return this.#scope.signal;
  }

  protected runMeter(): UsageMeter {
    return this.#scope.meter;
  }

  protected ownUsage(): UsageTotals {
    return this.#own.usage;
  }

  protected afterEnd(outcome: TurnOutcome, extra: EndExtra): TurnResult {
    return this.makeResult(outcome, extra);
  }

  /** What the caller gets while the turn waits for approval: the turn so far, not ended. */
  paused(requests: PendingApproval[]): TurnResult {
    const result: TurnResult = {
      outcome: 'awaiting_approval',
      usage: this.#scope.meter.usage,
      turn: this.turn,
      transitions: this.moves,
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
      turn: this.turn,
      transitions: this.moves,
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
    return this.overBudget(State.Error, llm.spent, { failures: llm.failures }, '; no further LLM call made');
  }

  violation(operation: string, problem: string, value: unknown): TurnResult {
    return this.failed(new ContractViolationError(operation, problem, value), { operation, problem });
  }
}
