import type { BudgetEndings } from '../BudgetEndings';
import type { BudgetLimits, SpentLimit } from '../BudgetLimits';
import type { UsageDelta, UsageTotals } from '../UsageTotals';

/**
 * What an LLM call does with its run's final-call hold in an external budget that keeps one
 * (`budget.wrapUp`): `keepUsd`, an ordinary call, held beside it from now on (the budget
 * answers `wrapsUp` when the call does not fit beside every run's, keeping the earlier hold);
 * `final`, the final call, which takes that hold's place.
 */
export type WrapHold = { keepUsd: number } | { final: true };

/**
 * A budget kept outside this process — a batch's total limits in Redis, shared by workers on
 * several machines. The adapter consults it before every LLM call and every tool call and
 * charges it as usage arrives, exactly where it checks and charges its in-memory budgets.
 */
export interface ExternalBudget {
  /**
   * Asks to start one call. Resolves to the limit that forbids it, or `undefined` to go ahead —
   * in which case the call is already counted (`llmCalls` or `toolCalls`), atomically, so that
   * call counts never pass their caps however many processes ask at once.
   */
  /**
   * `hold`, when given, is the call's worst-case cost in USD: a budget with a strict dollar cap
   * holds it in the same atomic step, and resolves to the limit when it does not fit. A strict
   * budget asked without a hold cannot enforce its cap and must refuse (fail closed). A cap that
   * pauses says so by `raises` on the refusal: the turn then stops with `awaiting_budget`, and
   * asks again on `retryBudget()` (after the cap was raised).
   */
  reserve(kind: 'llm' | 'tool', hold?: { costUsd: number; wrapUp?: WrapHold }): Promise<SpentLimit | undefined>;
  /**
   * Charges usage (tokens, cost, wall time); resolves to the first limit now spent, if any.
   * `release`, when given, is held USD to let go of in the same atomic step (the calls it was
   * held for have their responses, or failed).
   */
  charge(delta: UsageDelta, release?: { costUsd: number }): Promise<SpentLimit | undefined>;
  /**
   * True when this budget caps dollars: a response whose cost is unknown then fails closed
   * (`onUnknownCost`), as under an in-process `maxCostUsd`, and the adapter gives `reserve`
   * the call's worst case when it knows it.
   */
  readonly capsCost?: boolean;
  /**
   * True when its dollar cap is strict: a response past its bound (a server that ignores max
   * tokens) then stops the run, and `trip` stops every run that shares the budget.
   */
  readonly strict?: boolean;
  /**
   * True when its dollar cap pauses when spent (its refusals carry `raises`): a turn refused
   * by it then waits for a raise. A refusal with `raises` from a budget that does not say so
   * ends the turn as any refusal does.
   */
  readonly pauses?: boolean;
  /** Stops the budget for good, for every process that shares it, with `spent` as the reason. */
  trip?(spent: SpentLimit): Promise<void>;
  /**
   * How the runs of this budget end within its dollar cap (`wrapUp`, `visible`), as a budget of
   * the process would say it. `wrapUp` needs `holdsWrapUp`; `visible` needs `figures`.
   */
  readonly endings?: BudgetEndings;
  /** How errors name this budget's options (`total` for a distributed batch's). */
  readonly label?: string;
  /** True when `reserve` keeps a run's final-call hold (`hold.wrapUp`) and lets it go when the run ends. */
  readonly holdsWrapUp?: boolean;
  /** The budget's limits and usage now (`budget.visible`'s note says what is left of them). */
  figures?(): Promise<{ limits: BudgetLimits; usage: UsageTotals }>;
}
