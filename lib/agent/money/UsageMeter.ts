import { limitUsed } from '../../internal/fieldLists';
import { LIMITS } from '../../internal/limits';
import { plural } from '../../internal/text';
import { InvalidArgumentError } from '../../machine/InvalidArgumentError';
import { Budget } from './Budget';
import { boundExceededMessage, type BoundExceeded } from '../boundExceeded';
import { spentLimit, type BudgetLimitName, type SpentLimit } from '../BudgetLimits';
import type { ExternalBudget, WrapHold } from './ExternalBudget';
import { PROVIDER_BILLING, type BillingRule } from './providerBilling';
import { OperationError } from '../TurnError';
import { addUsageTo, emptyUsage, type UsageDelta, type UsageTotals } from '../UsageTotals';

/** Options of `new UsageMeter(options)`. */
export interface UsageMeterOptions {
  /** Budgets in this process, charged and checked in this order (the first spent limit is reported). */
  budgets: readonly Budget[];
  /**
   * Budgets outside the process (a batch's limits in Redis): `reserve()` before each call,
   * and what was charged meanwhile at the next await (`flush()`).
   */
  external?: readonly ExternalBudget[];
  /** Epoch milliseconds. Default `Date.now`. */
  clock?: () => number;
  /**
   * Of `budgets`, those other runs share (a batch's pool). A limit spent in a shared or an
   * external budget is said with that budget's figures, then the run's own (`budgets[0]`'s)
   * beside them. Leave it out when `budgets[0]` is not a run's own.
   */
  shared?: readonly Budget[];
  /**
   * Called at most once, when a budget's `maxWallMs` passes: the meter keeps one timer for
   * the earliest deadline, so that a stalled call cannot outlast it.
   */
  onDeadline?: (spent: SpentLimit) => void;
  /** Which failed requests are not billed, so their holds are released (default `PROVIDER_BILLING`; see `billingRules`). */
  billing?: readonly BillingRule[];
}

// setTimeout takes at most 2^31 − 1 ms; a longer delay fires at once (TimeoutOverflowWarning).
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * Meters the usage of one stretch of work (a turn, a framework's loop, a batch) against
 * budgets: charges them as usage arrives, charges the wall time that passed, answers whether
 * a limit is spent, reserves calls in external budgets, and watches the `maxWallMs` deadline.
 * Every deadline in the library is one of these.
 */
export class UsageMeter {
  readonly #budgets: readonly Budget[];
  readonly #external: readonly ExternalBudget[];
  /** The external budgets' `trip`, under way. */
  #tripping: Promise<void> | undefined;
  readonly #clock: () => number;
  readonly #onDeadline: ((spent: SpentLimit) => void) | undefined;
  /** Undefined when `budgets[0]` is not a run's own: messages then give no run's figures. */
  readonly #shared: readonly Budget[] | undefined;
  /** What this meter charged, in place; `usage` hands out a copy. */
  readonly #usage: UsageTotals = emptyUsage();
  /** The clock's last reading, when wall time was last charged. */
  #lastWallAt = 0;
  /** Usage not yet charged to the external budgets (they are charged at the next await). */
  #externalDue: UsageDelta | undefined;
  /** A limit an external budget reported spent: it stays spent. */
  #externalSpent: SpentLimit | undefined;
  /** USD of external holds to release with the next charge. */
  #externalRelease = 0;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #stopped = false;
  /** Which failed requests are not billed: the charge rule's data. */
  readonly billing: readonly BillingRule[];

  constructor(options: UsageMeterOptions) {
    if (typeof options !== 'object' || options === null)
      throw new InvalidArgumentError('options', 'an object { budgets, external?, clock?, onDeadline? }', options);
    const { budgets, external = [], clock = Date.now, onDeadline, shared, billing = PROVIDER_BILLING } = options;
    if (!Array.isArray(budgets) || !budgets.every((b) => b instanceof Budget))
      throw new InvalidArgumentError('budgets', 'an array of Budget', budgets);
    if (!Array.isArray(external))
      throw new InvalidArgumentError('external', 'an array of { reserve(kind), charge(delta) }', external);
    if (typeof clock !== 'function')
      throw new InvalidArgumentError('clock', 'a function returning epoch milliseconds', clock);
    if (onDeadline !== undefined && typeof onDeadline !== 'function')
      throw new InvalidArgumentError('onDeadline', 'a function (spent) => void', onDeadline);
    this.#budgets = budgets;
    this.#external = external;
    this.#clock = clock;
    this.#onDeadline = onDeadline;
    if (shared !== undefined && !(Array.isArray(shared) && shared.every((b) => budgets.includes(b))))
      throw new InvalidArgumentError('shared', 'an array of budgets from `budgets`', shared);
    this.#shared = shared;
    this.billing = billing;
  }

  /** Starts the wall time from now and arms the deadline, if a budget has `maxWallMs`. */
  start(): void {
    this.#lastWallAt = this.#clock();
    this.#arm();
  }

  /** Stops the deadline timer for good (the work has ended). Charging still works. */
  stop(): void {
    this.#stopped = true;
    clearTimeout(this.#timer);
  }

  /**
   * Stops counting wall time while the turn waits for a person (approval): that wait is
   * bounded by its own timeout, not by `maxWallMs`. `resumeWall()` counts again from then.
   */
  pauseWall(): void {
    this.chargeWall();
    clearTimeout(this.#timer);
  }

  /** Counts wall time again from now, and re-arms the deadline. */
  resumeWall(): void {
    this.#lastWallAt = this.#clock();
    this.#arm();
  }

  /** What this meter has charged so far (a copy). */
  get usage(): UsageTotals {
    return { ...this.#usage };
  }

  /** The clock's last reading: when wall time was last charged. */
  get lastReading(): number {
    return this.#lastWallAt;
  }

  /**
   * Whether some budget sets `limit`: one of this process, or, for `maxCostUsd`, an external
   * one that says it caps dollars (`capsCost`), so that an unknown cost fails closed there too.
   */
  caps(limit: BudgetLimitName): boolean {
    // A loop, not `some`: asked twice for every response, and a callback would be made each time.
    for (const b of this.#budgets) if (b.limits[limit] !== undefined) return true;
    return limit === 'maxCostUsd' && this.externalCapsCost;
  }

  /** Whether some external budget caps dollars (`capsCost: true`). */
  get externalCapsCost(): boolean {
    return this.#external.some((b) => b.capsCost === true);
  }

  /** Whether some budget of this process has a strict `maxCostUsd`. */
  get strict(): boolean {
    return this.#budgets.some((b) => b.strict);
  }

  /** The budgets of this process, in the order they are charged and checked. */
  get budgets(): readonly Budget[] {
    return this.#budgets;
  }

  /** Dollars left under every `maxCostUsd`, strict or not, less what is held (Infinity when none caps dollars). */
  get costRoom(): number {
    let room = Infinity;
    for (const b of this.#budgets) {
      const max = b.limits.maxCostUsd;
      if (max !== undefined) room = Math.min(room, max - b.usage.costUsd - b.held);
    }
    return room;
  }

  /** Dollars a hold may take now: the least room of the strict budgets (Infinity when none is strict). */
  get room(): number {
    let room = Infinity;
    for (const budget of this.#budgets) room = Math.min(room, budget.room);
    return room;
  }

  /**
   * Holds a call's worst case against every strict budget, or none of them: the first that
   * it does not fit refuses it. Synchronous, so runs sharing a budget are counted one by one.
   */
  hold(costUsd: number): SpentLimit | undefined {
    for (const budget of this.#budgets) {
      if (!budget.strict) continue;
      const refused = budget.hold(costUsd);
      if (refused !== undefined) {
        for (const held of this.#budgets) {
          if (held === budget) break;
          if (held.strict) held.release(costUsd);
        }
        return this.#withRunFigures(refused, budget);
      }
    }
    return undefined;
  }

  /** Whether a response past its bound stops the run: a strict cap here or in an external budget. */
  get tripsOnBound(): boolean {
    return this.strict || this.#external.some((b) => b.strict === true);
  }

  /** Resolves once the external budgets heard of the last `trip` (never rejects: a budget that could not be told fails closed on its own). */
  tripped(): Promise<void> {
    return this.#tripping ?? Promise.resolve();
  }

  /**
   * Stops every budget for good (`Budget.trip`, and the external budgets' `trip`, under way
   * until `tripped()` resolves): a response passed its bound, so no strict cap can be kept. The
   * stop is said with the first strict budget's figures and carries the fact.
   */
  trip(fact: BoundExceeded): SpentLimit {
    const strict = this.#budgets.find((b) => b.strict);
    const spent: SpentLimit = {
      limit: 'maxCostUsd',
      used: strict?.usage.costUsd ?? this.#usage.costUsd,
      max: strict?.limits.maxCostUsd ?? 0,
      message: boundExceededMessage(fact),
      boundExceeded: fact,
    };
    for (const budget of this.#budgets) budget.trip(spent);
    if (this.#external.some((b) => b.trip !== undefined))
      this.#tripping = Promise.allSettled(this.#external.map((b) => b.trip?.(spent))).then(() => undefined);
    return spent;
  }

  /**
   * Releases a hold of the strict budgets, and of the external ones with the next charge
   * (`external`: the hold they were given with `reserve`).
   */
  release(costUsd: number, external: number | undefined): void {
    for (const budget of this.#budgets) if (budget.strict) budget.release(costUsd);
    if (external !== undefined && external > 0) this.#externalRelease += external;
  }

  /** The budgets outside this process, in the order they are reserved and charged. */
  get external(): readonly ExternalBudget[] {
    return this.#external;
  }

  /** Whether there are external budgets (each call then awaits them). */
  get hasExternal(): boolean {
    return this.#external.length > 0;
  }

  /**
   * Charges `delta` to every budget. With `external`, it is also due to the external budgets,
   * which get it at the next `flush()` or `reserve()`; call counts reach them through `reserve()`.
   */
  charge(delta: UsageDelta, external = true): void {
    addUsageTo(this.#usage, delta);
    for (const budget of this.#budgets) budget.charge(delta);
    if (external && this.#external.length > 0)
      this.#externalDue = this.#externalDue === undefined ? { ...delta } : sumDelta(this.#externalDue, delta);
  }

  /**
   * Charges `delta` to the first budget alone (a turn's meter: the agent's own), not to shared or
   * external ones: usage of an interrupted run that a resumed one re-drives was charged to those
   * already (they start from the files' spend).
   */
  chargeOwn(delta: UsageDelta): void {
    addUsageTo(this.#usage, delta);
    this.#budgets[0]?.charge(delta);
  }

  /** Charges the wall time since the last reading. `now` may be a reading just taken, when no code of others ran since. */
  chargeWall(now = this.#clock()): void {
    const elapsed = Math.max(0, now - this.#lastWallAt);
    this.#lastWallAt = now;
    if (elapsed > 0) this.charge({ wallMs: elapsed });
  }

  /** Charges the wall time so far, then returns the first spent limit of any budget (an external one's first). */
  spent(): SpentLimit | undefined {
    this.chargeWall();
    if (this.#externalSpent !== undefined) return this.#withRunFigures(this.#externalSpent, undefined);
    for (const budget of this.#budgets) {
      const spent = budget.spent();
      if (spent !== undefined) return this.#withRunFigures(spent, budget);
    }
    return undefined;
  }

  /**
   * A limit spent in a budget other than the run's own (`by`: undefined for an external one),
   * with the run's own figures for it beside the shared ones: `…; this run: $0.0030 after 1 LLM call`.
   */
  #withRunFigures(spent: SpentLimit, by: Budget | undefined): SpentLimit {
    const run = this.#budgets[0];
    const shared = this.#shared;
    if (shared === undefined || run === undefined || (by !== undefined && !shared.includes(by))) return spent;
    const usage = run.usage;
    const { label, cell } = LIMITS[spent.limit];
    const figures = `${label} ${cell(limitUsed(usage, spent.limit))} after ${plural(usage.llmCalls, 'LLM call')}`;
    return { ...spent, message: `${spent.message}; this run: ${figures}` };
  }

  /**
   * A model call's gate outside the process, for the adapter and the mirror alike: the external
   * budgets asked to start it with its external hold (`held.externalHold`, and the final call's
   * hold `wrapHold` kept beside it). When they refuse or fail, its in-process hold goes back.
   */
  async reserveCall(
    held: { held: number; externalHold?: number | undefined },
    wrapHold: WrapHold | undefined,
  ): Promise<SpentLimit | OperationError | undefined> {
    const { externalHold } = held;
    const spent = await this.reserve(
      'llm',
      externalHold === undefined
        ? undefined
        : { costUsd: externalHold, ...(wrapHold === undefined ? {} : { wrapUp: wrapHold }) },
    );
    if (spent !== undefined) this.release(held.held, undefined);
    return spent;
  }

  /**
   * Asks every external budget to start one call, after charging what is due. Resolves to the
   * limit that forbids it, an `OperationError` when a budget failed, or undefined to go ahead.
   */
  async reserve(
    kind: 'llm' | 'tool',
    hold?: { costUsd: number; wrapUp?: WrapHold },
  ): Promise<SpentLimit | OperationError | undefined> {
    // Usage due is charged first, so that the budget decides on it; wall time alone waits to
    // ride with the next charge rather than cost a round trip of its own.
    const flushed = await this.flush(true);
    if (flushed !== undefined) return flushed;
    for (const [i, budget] of this.#external.entries()) {
      try {
        const spent = await (hold === undefined ? budget.reserve(kind) : budget.reserve(kind, hold));
        // A pausing cap's refusal ends nothing: the run waits for a raise, then asks again; nor
        // does one beside the final calls' holds: the run makes its final call.
        if (spent?.raises !== undefined || spent?.wrapsUp === true) return this.#withRunFigures(spent, undefined);
        if (spent !== undefined) return this.#withRunFigures((this.#externalSpent ??= spent), undefined);
      } catch (error) {
        return new OperationError(`externalBudgets[${i}].reserve('${kind}')`, error);
      }
    }
    return undefined;
  }

  /**
   * Charges the wall time and what is due to the external budgets. Resolves to a limit they
   * report spent, an `OperationError` naming the budget that failed, or undefined. With
   * `unlessWallOnly`, wall time alone is kept for the next charge.
   */
  async flush(unlessWallOnly = false): Promise<SpentLimit | OperationError | undefined> {
    this.chargeWall();
    const release = this.#externalRelease;
    const delta = this.#externalDue ?? (release > 0 ? {} : undefined);
    if (delta === undefined || (unlessWallOnly && release === 0 && onlyWall(delta))) return undefined;
    this.#externalDue = undefined;
    this.#externalRelease = 0;
    let first: SpentLimit | undefined;
    for (const [i, budget] of this.#external.entries()) {
      try {
        const spent = await (release > 0 ? budget.charge(delta, { costUsd: release }) : budget.charge(delta));
        first ??= spent;
        this.#externalSpent ??= spent;
      } catch (error) {
        return new OperationError(`externalBudgets[${i}].charge`, error);
      }
    }
    return first;
  }

  /** Whether usage (or a hold's release) is waiting to be charged to the external budgets. */
  get externalDue(): boolean {
    return this.#externalDue !== undefined || this.#externalRelease > 0;
  }

  /** Arms the timer for the earliest `maxWallMs` left, with the wall time charged up to now. */
  #arm(): void {
    if (this.#onDeadline === undefined || this.#stopped) return;
    let remaining = Infinity;
    for (const budget of this.#budgets) {
      const max = budget.limits.maxWallMs;
      if (max !== undefined) remaining = Math.min(remaining, max - budget.usage.wallMs);
    }
    if (remaining === Infinity) return;
    this.#timer = setTimeout(() => this.#fire(), Math.min(Math.max(1, Math.ceil(remaining)), MAX_TIMER_MS));
    // The timer must not keep a process alive on its own.
    (this.#timer as { unref?: () => void }).unref?.();
  }

  #fire(): void {
    if (this.#stopped) return;
    this.chargeWall();
    for (const budget of this.#budgets) {
      const max = budget.limits.maxWallMs;
      const spent = max === undefined ? undefined : spentLimit(budget.usage, { maxWallMs: max }, budget.label);
      if (spent !== undefined) {
        this.stop();
        this.#onDeadline!(spent);
        return;
      }
    }
    // Not yet: an injected clock behind the timer's, or a delay clamped to 2^31 − 1 ms.
    this.#arm();
  }
}

function onlyWall(delta: UsageDelta): boolean {
  for (const key in delta) if (key !== 'wallMs' && delta[key as keyof UsageDelta] !== 0) return false;
  return true;
}

function sumDelta(a: UsageDelta, b: UsageDelta): UsageDelta {
  const out: UsageDelta = { ...a };
  for (const key of Object.keys(b) as Array<keyof UsageDelta>) out[key] = (out[key] ?? 0) + (b[key] ?? 0);
  return out;
}
