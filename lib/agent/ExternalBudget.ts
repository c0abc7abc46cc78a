import type { SpentLimit } from './BudgetLimits';
import type { UsageDelta } from './UsageTotals';

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
  reserve(kind: 'llm' | 'tool'): Promise<SpentLimit | undefined>;
  /** Charges usage (tokens, cost, wall time); resolves to the first limit now spent, if any. */
  charge(delta: UsageDelta): Promise<SpentLimit | undefined>;
}
