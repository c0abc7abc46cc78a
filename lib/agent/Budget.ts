import { InvalidArgumentError } from '../machine/InvalidArgumentError';
import { assertBudgetLimits, checkedSpentLimit, LIMIT_NAMES, type BudgetLimitName, type BudgetLimits, type SpentLimit } from './BudgetLimits';
import { emptyUsage, roundCost, type UsageDelta, type UsageTotals } from './UsageTotals';

/** Options of `new Budget(limits, options)`: its label in messages, and how it measures wall time. */
export interface BudgetOptions {
  /** Used in messages: `budget exceeded: …`, `shared budget exceeded: …`. Default `budget`. */
  label?: string;
  /**
   * Measure `wallMs` as the time since the budget was made (a batch's shared pool), instead
   * of summing what callers charge (an agent's time inside turns).
   */
  elapsedWall?: { clock: () => number };
}

/**
 * Usage charged as it happens against limits. One agent has its own; a batch shares one
 * across its runs, which all charge it, so that one run's spending stops the others.
 */
export class Budget {
  readonly limits: BudgetLimits;
  readonly label: string;
  #usage: UsageTotals = emptyUsage();
  readonly #elapsed: { clock: () => number; start: number } | undefined;
  /** The limits set, in the order they are checked. */
  readonly #set: readonly BudgetLimitName[];

  constructor(limits: BudgetLimits = {}, options: BudgetOptions = {}) {
    assertBudgetLimits(limits, options.label ?? 'budget');
    this.limits = Object.freeze({ ...limits });
    this.label = options.label ?? 'budget';
    this.#set = LIMIT_NAMES.filter((name) => this.limits[name] !== undefined);
    this.#elapsed = options.elapsedWall && { clock: options.elapsedWall.clock, start: options.elapsedWall.clock() };
  }

  /** Usage so far (a copy). */
  get usage(): UsageTotals {
    const usage = { ...this.#usage };
    if (this.#elapsed !== undefined) usage.wallMs = Math.max(0, this.#elapsed.clock() - this.#elapsed.start);
    return usage;
  }

  /**
   * Adds usage. Every field must be a non-negative finite number: one NaN would disable the
   * limits for good, and a negative one would refund spend.
   */
  charge(delta: UsageDelta): void {
    if (typeof delta !== 'object' || delta === null) throw new InvalidArgumentError('delta', 'an object of usage numbers', delta);
    // The own enumerable keys, as Object.keys gives them, without an array per call.
    for (const key in delta) {
      if (!Object.prototype.hasOwnProperty.call(delta, key)) continue;
      const value = delta[key as keyof UsageDelta];
      if (value !== undefined && !(typeof value === 'number' && Number.isFinite(value) && value >= 0)) {
        throw new InvalidArgumentError(`delta.${key}`, 'a non-negative finite number', value);
      }
    }
    // In place: this runs on every LLM call and tool call of every run of a batch.
    const u = this.#usage;
    u.inputTokens += delta.inputTokens ?? 0;
    u.outputTokens += delta.outputTokens ?? 0;
    // Rounded as addUsage rounds, so sums of cents do not print as 0.21000000000000002.
    if (delta.costUsd !== undefined) u.costUsd = roundCost(u.costUsd + delta.costUsd);
    u.toolCalls += delta.toolCalls ?? 0;
    u.llmCalls += delta.llmCalls ?? 0;
    if (this.#elapsed === undefined) u.wallMs += delta.wallMs ?? 0;
  }

  /** A budget with other limits and this one's usage so far (and its label and wall clock). */
  withLimits(limits: BudgetLimits): Budget {
    const next = new Budget(limits, { label: this.label });
    next.#usage = { ...this.#usage };
    return next;
  }

  /** The first spent limit, or undefined while there is room. */
  spent(): SpentLimit | undefined {
    if (this.#set.length === 0) return undefined;
    // Only reads: no copy needed unless the wall time is measured here. The limits were checked and frozen when this budget was made.
    return checkedSpentLimit(this.#elapsed === undefined ? this.#usage : this.usage, this.limits, this.label, this.#set);
  }
}
