import { isStrictCap } from './isStrictCap';
import { LIMIT_NAMES } from '../../internal/fieldLists';
import { formatUsd } from '../../internal/formatUsd';
import { LIMITS } from '../../internal/limits';
import { chargeBound } from '../../internal/usageBounds';
import type { UsageFieldName } from '../../internal/usageFields';
import { InvalidArgumentError } from '../../machine/InvalidArgumentError';
import { assertBudgetLimits, spentAt, type BudgetLimitName, type BudgetLimits, type SpentLimit } from '../BudgetLimits';
import { addUsageTo, emptyUsage, roundCost, type UsageDelta, type UsageTotals } from '../UsageTotals';

/** Options of `new Budget(limits, options)`: its label in messages, and how it measures wall time. */
export interface BudgetOptions {
  /** Used in messages: `budget exceeded: …`, `shared budget exceeded: …`. Default `budget`. */
  label?: string;
  /**
   * Measure `wallMs` as the time since the budget was made (a batch's shared pool), instead
   * of summing what callers charge (an agent's time inside turns).
   */
  elapsedWall?: { clock: () => number };
  /**
   * What a strict `maxCostUsd` does when a call does not fit: `'stop'` (the default) ends the
   * run as `budget_exceeded`; `'pause'` stops the turn with `awaiting_budget` until the cap is
   * raised (`raise`). A pausing cap is never reported spent: it refuses holds instead.
   */
  whenSpent?: 'pause' | 'stop';
}

/** A limit that is set, ready to check: its cap, and the fields it sums apart from wall time. */
interface Check {
  readonly limit: BudgetLimitName;
  readonly max: number;
  readonly of: readonly UsageFieldName[];
  /** It also counts `wallMs`, which an elapsed-wall budget reads from its clock. */
  readonly wall: boolean;
}

/**
 * Usage charged as it happens against limits. One agent has its own; a batch shares one
 * across its runs, which all charge it, so that one run's spending stops the others.
 */
export class Budget {
  #limits: BudgetLimits;
  readonly label: string;
  #usage: UsageTotals = emptyUsage();
  readonly #elapsed: { clock: () => number; start: number } | undefined;
  /** The limits set, in the order they are checked (a pausing cost cap is not: holds keep it). */
  #checks: readonly Check[];
  /** Some limit set counts wall time: only then does `spent()` read an elapsed-wall clock. */
  readonly #timed: boolean;
  /** `whenSpent: 'pause'`: a call that does not fit pauses its turn until `raise`. */
  readonly #pauses: boolean;
  /** Raises so far; a refusal carries the count, so a run parked after a raise knows it came. */
  #raises = 0;
  /** A call was refused since the last raise (pausing budgets only). */
  #paused = false;
  /** USD held by LLM calls in flight against a strict `maxCostUsd` (their worst cases). */
  #held = 0;
  /** Set by `trip`: the stop every later check meets. */
  #tripped: SpentLimit | undefined;

  constructor(limits: BudgetLimits = {}, options: BudgetOptions = {}) {
    assertBudgetLimits(limits, options.label ?? 'budget');
    this.#limits = Object.freeze({ ...limits });
    this.label = options.label ?? 'budget';
    const { whenSpent } = options;
    if (whenSpent !== undefined && whenSpent !== 'pause' && whenSpent !== 'stop')
      throw new InvalidArgumentError('whenSpent', "'pause' or 'stop'", whenSpent);
    if (whenSpent === 'pause' && !isStrictCap(this.#limits))
      throw new InvalidArgumentError(
        'whenSpent',
        "left out (or 'stop') unless `maxCostUsd` is a strict cap: only a cap that holds each call before it starts can pause it",
        whenSpent,
      );
    this.#pauses = whenSpent === 'pause';
    this.#checks = this.#makeChecks();
    this.#timed = this.#checks.some((check) => check.wall);
    this.#elapsed = options.elapsedWall && { clock: options.elapsedWall.clock, start: options.elapsedWall.clock() };
  }

  /** The limits in force (a raise replaces `maxCostUsd`). */
  get limits(): BudgetLimits {
    return this.#limits;
  }

  /** Whether a call this cap refuses pauses its turn (`whenSpent: 'pause'`) instead of ending it. */
  get pauses(): boolean {
    return this.#pauses;
  }

  /** A pausing budget refused a call since its last raise: the runs it refused wait for `raise`. */
  get paused(): boolean {
    return this.#paused;
  }

  /** How many times `raise` was called. */
  get raises(): number {
    return this.#raises;
  }

  /**
   * Raises the dollar cap of a pausing budget to `maxCostUsd` (more than the cap now): calls
   * that did not fit may fit now. Spent and held are kept.
   */
  raise(maxCostUsd: number): void {
    if (!this.#pauses) throw new InvalidArgumentError('raise()', "a budget made with whenSpent: 'pause'", this.label);
    const now = this.#limits.maxCostUsd!;
    if (!(typeof maxCostUsd === 'number' && Number.isFinite(maxCostUsd) && maxCostUsd > now))
      throw new InvalidArgumentError(
        'maxCostUsd',
        `a finite number of USD above the cap in force (${formatUsd(now)})`,
        maxCostUsd,
      );
    this.#limits = Object.freeze({ ...this.#limits, maxCostUsd });
    this.#checks = this.#makeChecks();
    this.#raises += 1;
    this.#paused = false;
  }

  /** Usage so far (a copy). */
  get usage(): UsageTotals {
    const usage = { ...this.#usage };
    if (this.#elapsed !== undefined) usage.wallMs = this.#elapsedMs();
    return usage;
  }

  /**
   * Adds usage. Every field must be a non-negative finite number: one NaN would disable the
   * limits for good, and a negative one would refund spend.
   */
  charge(delta: UsageDelta): void {
    if (typeof delta !== 'object' || delta === null)
      throw new InvalidArgumentError('delta', 'an object of usage numbers', delta);
    // The own enumerable keys, as Object.keys gives them, without an array per call.
    for (const key in delta) {
      if (!Object.prototype.hasOwnProperty.call(delta, key)) continue;
      const value = delta[key as keyof UsageDelta];
      if (value !== undefined && !(typeof value === 'number' && Number.isFinite(value) && value >= 0)) {
        throw new InvalidArgumentError(`delta.${key}`, 'a non-negative finite number', value);
      }
      // A huge number is a bug, not a bill: summed, it would end every later check.
      if (value !== undefined && value > chargeBound(key))
        throw new InvalidArgumentError(
          `delta.${key}`,
          `a number of at most ${chargeBound(key)} (the stated bound)`,
          value,
        );
    }
    // In place: this runs on every LLM call and tool call of every run of a batch.
    addUsageTo(this.#usage, delta);
    // Wall time measured as elapsed time is never charged.
    if (this.#elapsed !== undefined) this.#usage.wallMs = 0;
  }

  /** Whether `maxCostUsd` is strict (it is unless `strict: false`): LLM calls hold their worst case against it before they start. */
  get strict(): boolean {
    return isStrictCap(this.limits);
  }

  /** USD held now by calls in flight (strict budgets only). */
  get held(): number {
    return this.#held;
  }

  /** Dollars a new hold may take now: the strict cap less spent and held (may be negative); Infinity when not strict. */
  get room(): number {
    if (!this.strict) return Infinity;
    return this.#limits.maxCostUsd! - this.#usage.costUsd - this.#held;
  }

  /**
   * Holds `costUsd` (a call's worst case) against the strict cap when it fits: spent plus held
   * plus it stays within `maxCostUsd`. Synchronous, so that calls of runs sharing this budget
   * in one process are counted one after the other. Returns the refusal, or undefined once held.
   */
  hold(costUsd: number): SpentLimit | undefined {
    if (!(typeof costUsd === 'number' && Number.isFinite(costUsd) && costUsd >= 0))
      throw new InvalidArgumentError('costUsd', 'a non-negative finite number of USD', costUsd);
    if (!this.strict) return undefined;
    const max = this.#limits.maxCostUsd!;
    const used = roundCost(this.#usage.costUsd + this.#held);
    if (roundCost(used + costUsd) > max) {
      const spent = spentAt('maxCostUsd', used, max, this.#usage.llmCalls, this.label);
      if (this.#pauses) this.#paused = true;
      return {
        ...spent,
        hold: costUsd,
        ...(this.#pauses ? { raises: this.#raises } : {}),
        message: `${this.label} exceeded: the next LLM call may cost up to ${formatUsd(costUsd)}, which does not fit beside ${LIMITS.maxCostUsd.against(used, max)} spent or held (strict) after ${this.#usage.llmCalls} LLM call${this.#usage.llmCalls === 1 ? '' : 's'}`,
      };
    }
    this.#held = roundCost(this.#held + costUsd);
    return undefined;
  }

  /** Releases a hold taken by `hold` (the call has its response, or failed without one). */
  release(costUsd: number): void {
    this.#held = Math.max(0, roundCost(this.#held - costUsd));
  }

  /** A budget with other limits and this one's usage so far (and its label and wall clock). */
  withLimits(limits: BudgetLimits): Budget {
    const next = new Budget(limits, { label: this.label });
    next.#usage = { ...this.#usage };
    next.#held = this.#held;
    return next;
  }

  /**
   * Stops this budget for good with `spent`: a response passed its bound, so a strict cap can no
   * longer be kept. Every run sharing it meets `spent` at its next check, and a batch starts no run.
   */
  trip(spent: SpentLimit): void {
    this.#tripped ??= spent;
  }

  /** The first spent limit, or undefined while there is room. */
  spent(): SpentLimit | undefined {
    if (this.#tripped !== undefined) return this.#tripped;
    const checks = this.#checks;
    if (checks.length === 0) return undefined;
    // Only reads, and no copy: the limits were checked and frozen when this budget was made.
    const u = this.#usage;
    const wall = this.#elapsed === undefined || !this.#timed ? u.wallMs : this.#elapsedMs();
    for (let c = 0; c < checks.length; c++) {
      const check = checks[c]!;
      let used = check.wall ? wall : 0;
      for (let i = 0; i < check.of.length; i++) used += u[check.of[i]!];
      if (used >= check.max) return spentAt(check.limit, used, check.max, u.llmCalls, this.label);
    }
    return undefined;
  }

  /** The limits set, as `spent()` checks them; a pausing cost cap is left to the holds. */
  #makeChecks(): Check[] {
    return LIMIT_NAMES.flatMap((limit) => {
      const max = this.#limits[limit];
      const of: readonly UsageFieldName[] = LIMITS[limit].of;
      if (max === undefined || (limit === 'maxCostUsd' && this.#pauses)) return [];
      return [{ limit, max, of: of.filter((k) => k !== 'wallMs'), wall: of.includes('wallMs') }];
    });
  }

  #elapsedMs(): number {
    return Math.max(0, this.#elapsed!.clock() - this.#elapsed!.start);
  }
}
