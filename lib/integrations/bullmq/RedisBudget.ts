import type { Redis } from 'ioredis';
import {
  Budget,
  InvalidArgumentError,
  type BudgetEndings,
  type BudgetLimits,
  type ExternalBudget,
  type SpentLimit,
  type UsageDelta,
  type UsageTotals,
} from 'agent-state-machine';
import { CHARGE_FIELD_NAMES, USAGE_FIELD_NAMES } from '../../internal/fieldLists';
import { formatUsd } from '../../internal/formatUsd';
import { USAGE_FIELDS } from '../../internal/usageFields';
import type { BatchKeys } from './batchKeys';
import { CALL_CODES, capsOf, usageFromStrings, WRAP_CODES, type StrictLimits } from './budgetFields';
import { bounded } from './connection';
import { OPTION_DEFAULTS } from '../../internal/optionTable';
import { runScript } from './redisScripts';
import { MAX_COUNTER } from './scripts';
import { TakenOverError } from './TakenOverError';

/** What an LLM call does with the run's final-call hold (`ExternalBudget`'s `WrapHold`). */
type WrapHold = NonNullable<NonNullable<Parameters<ExternalBudget['reserve']>[1]>['wrapUp']>;

/** Options of `new RedisBudget(…, options)`. */
export interface RedisBudgetOptions {
  /**
   * Keep each charge (and each tool call, when the batch caps no tool calls) until the next
   * reservation, and send them with it in one script call: one round trip per LLM call instead
   * of two or three. What is kept is sent by `settle()`, which the owner must call once the run
   * ends. A limit spent by a kept charge is found by the next reservation (here or on any
   * worker), before the next call. Default false.
   */
  deferCharges?: boolean;
  /** How long a call waits for an unreachable Redis before it fails (and the call is not made). Default 10,000 ms. */
  timeoutMs?: number;
  /**
   * The run's attempt (`begin`'s): once a later attempt took the run over (`takeOver`,
   * `writeOff`), this one's steps are fenced — its charges count, its reservations are refused
   * (`TakenOverError`), it lets go of no hold. Without it, steps are never fenced.
   */
  attempt?: number;
}

/**
 * A batch's `total` limits, kept in Redis and shared by every worker: the `ExternalBudget`
 * each run's adapter consults before every LLM call and tool call and charges as responses
 * arrive. Each round trip is one Lua script — atomic — so call counts never pass their caps
 * however many workers ask at once, and a strict `maxCostUsd` is never passed: each LLM call
 * holds its worst case (`reserve('llm', { costUsd })`) and starts only when spent + held + its
 * hold fit under the cap. A non-strict cap is passed by at most one LLM response per run in
 * flight in the whole cluster. `maxWallMs` is the batch's elapsed time on Redis's clock.
 *
 * Fail closed: a budget gone from Redis, an unreachable Redis (after `timeoutMs`), an amount
 * that is not a number or would overflow a counter, and a strict cap with no worst case to
 * hold all reject — the adapter then ends the run as an error saying why, without the call.
 */
export class RedisBudget implements ExternalBudget {
  readonly #redis: Redis;
  readonly #keys: BatchKeys;
  readonly #limits: StrictLimits;
  readonly #run: string;
  readonly #defer: boolean;
  readonly #timeoutMs: number;
  readonly #attempt: number | undefined;
  /** The attempt that took this run over, once a step was refused as stale: settle() has nothing to let go. */
  #takenOverBy: number | undefined;
  /** Kept for the next round trip (deferCharges): response amounts, tool calls, dollars to release. */
  #due: number[] = CHARGE_FIELD_NAMES.map(() => 0);
  #dueTools = 0;
  #dueRelease = 0;
  /** A final-call hold was asked to be kept for this run: settle() lets it go. */
  #keepsWrap = false;
  /** A step got no answer (a timeout, a reply lost to a restart): it may have held; settle() lets go of what it left. */
  #unsure = false;
  /** Round trips made to Redis (for benchmarks and tests). */
  roundTrips = 0;

  /** One per run: `run` is the run's index in the batch, so its own spend is kept too. */
  constructor(redis: Redis, keys: BatchKeys, limits: StrictLimits, run: number, options: RedisBudgetOptions = {}) {
    this.#redis = redis;
    this.#keys = keys;
    this.#limits = limits;
    this.#run = String(run);
    this.#defer = options.deferCharges === true;
    this.#timeoutMs = options.timeoutMs ?? OPTION_DEFAULTS.timeoutMs;
    this.#attempt = options.attempt === undefined ? undefined : amount(options.attempt, 'options.attempt');
  }

  /** True when the batch caps dollars: a response of unknown cost is then an error, as under an in-process `maxCostUsd`. */
  get capsCost(): boolean {
    return this.#limits.maxCostUsd !== undefined;
  }

  /** True when the batch's `maxCostUsd` is strict (the default): a response past its bound then stops the whole batch (`trip`). */
  get strict(): boolean {
    return this.#limits.maxCostUsd !== undefined && this.#limits.strict !== false;
  }

  /** True when the batch's dollar cap pauses when spent (`whenSpent: 'pause'`): a refused turn waits for a raise. */
  get pauses(): boolean {
    return this.#limits.whenSpent === 'pause';
  }

  /**
   * A response passed its bound under the strict cap: the cap cannot be kept, so the batch stops.
   * Marks the budget in Redis, so that every worker's next call and every run not yet begun
   * meets the stop, with `spent.message` as the reason.
   */
  async trip(spent: SpentLimit): Promise<void> {
    this.roundTrips += 1;
    await bounded(
      this.#redis,
      'RedisBudget.trip',
      () => runScript(this.#redis, 'asmTrip', [this.#keys.budget], [spent.message]),
      this.#timeoutMs,
    );
  }

  /** The batch's `wrapUp` and `visible`, for the run's turn: it wraps up within the batch's cap, and sees its figures. */
  get endings(): BudgetEndings | undefined {
    const { wrapUp, visible } = this.#limits;
    if (wrapUp === undefined && visible !== true) return undefined;
    return { ...(wrapUp === undefined ? {} : { wrapUp }), ...(visible === true ? { visible } : {}) };
  }

  /** Each run's final-call hold is kept in Redis beside its ordinary holds (`reserve`'s `hold.wrapUp`), and let go by `settle()`. */
  readonly holdsWrapUp = true;

  /** Errors name the batch's limits as submitBatch took them. */
  readonly label = 'total';

  /** The batch's usage (wall time on Redis's clock) and its limits, the dollar cap in force among them: one round trip. */
  async figures(): Promise<{ limits: BudgetLimits; usage: UsageTotals }> {
    this.roundTrips += 1;
    const reply = (await bounded(
      this.#redis,
      'RedisBudget.figures',
      () => runScript(this.#redis, 'asmFigures', [this.#keys.budget], []),
      this.#timeoutMs,
    )) as string[];
    if (reply[0] === '!missing') throw gone(this.#keys);
    const cap = reply[USAGE_FIELD_NAMES.length];
    const limits = capsOf(this.#limits);
    return {
      limits: cap === undefined || cap === '' ? limits : { ...limits, maxCostUsd: Number(cap) },
      usage: usageFromStrings(reply.slice(0, USAGE_FIELD_NAMES.length)),
    };
  }

  async reserve(kind: 'llm' | 'tool', hold?: { costUsd: number; wrapUp?: WrapHold }): Promise<SpentLimit | undefined> {
    if (kind !== 'llm' && kind !== 'tool') throw new InvalidArgumentError('kind', "'llm' or 'tool'", kind);
    const held = hold === undefined ? 0 : amount(hold.costUsd, 'hold.costUsd');
    // A final call's hold matters only beside the batch's dollar cap: without one, none is kept.
    const wrap = this.#limits.maxCostUsd === undefined ? [] : wrapArgs(hold?.wrapUp);
    // Tool calls under no tool-call cap need no answer of their own: counted with the next round trip.
    if (kind === 'tool' && this.#defer && this.#limits.maxToolCalls === undefined && held === 0) {
      this.#dueTools += 1;
      return undefined;
    }
    // Kept from now on (should the reply be lost too): settle() lets it go.
    if (wrap[0] === WRAP_CODES.keep) this.#keepsWrap = true;
    return this.#step(CALL_CODES[kind], held, `RedisBudget.reserve('${kind}')`, wrap);
  }

  async charge(delta: UsageDelta, release?: { costUsd: number }): Promise<SpentLimit | undefined> {
    this.#keep(delta, release === undefined ? 0 : amount(release.costUsd, 'release.costUsd'));
    // Wall time and call counts change nothing here (the batch's wall is Redis's clock, calls are
    // counted by reserve): no round trip. A limit spent elsewhere is found by the next reserve.
    if (this.#defer || !this.#hasDue()) return undefined;
    return this.#step('', 0, 'RedisBudget.charge');
  }

  /**
   * This run taken over, by this budget's attempt, from an attempt whose worker was lost — or
   * whose job lock expired while it lives on: the two cannot be told apart. In one step: the
   * holds of the earlier attempt's calls are charged as uncertain (each call may have left, or may
   * still leave, at its worst case), `missing` is charged (what its records say it spent beyond
   * what reached Redis: its tokens, and under a cap that is not strict its dollars beyond those
   * holds), every hold it left is let go, and the earlier attempts are fenced (their charges
   * count, their reservations and releases are refused). Sent now, whatever `deferCharges` says.
   */
  async takeOver(missing: UsageDelta): Promise<void> {
    this.#keep(missing, 0);
    await this.#step('', 0, 'RedisBudget.takeOver', [WRAP_CODES.lost, 0]);
  }

  /**
   * This run written off: reported lost (no attempt left under `retryLostRuns`; give the attempt
   * after the last one begun), or taken over with no records to read. The holds of its calls are
   * charged as uncertain — each may have left, its worst case held — every hold it left in Redis
   * is let go, and the earlier attempts are fenced, in one step. Money that may have been spent
   * counts as spent, and no hold outlives its run.
   */
  async writeOff(): Promise<void> {
    await this.#step('', 0, 'RedisBudget.writeOff', [WRAP_CODES.lost, 0]);
  }

  /** Adds `delta` and `release` to what the next round trip sends. */
  #keep(delta: UsageDelta, release: number): void {
    if (typeof delta !== 'object' || delta === null)
      throw new InvalidArgumentError('delta', 'an object of usage numbers', delta);
    // What a charge carries (tokens, dollars billed, uncertain and released); Redis adds whole numbers to all but dollars.
    const amounts = CHARGE_FIELD_NAMES.map((key) => {
      const value = delta[key] === undefined ? 0 : amount(delta[key], `delta.${key}`);
      return 'dollars' in USAGE_FIELDS[key] ? value : Math.round(value);
    });
    amounts.forEach((value, i) => (this.#due[i]! += value));
    this.#dueRelease += release;
  }

  /**
   * Sends what `deferCharges` kept (a run's last charge), and lets go of every hold the run has
   * left in Redis — its final-call hold, and the hold of a reservation whose reply was lost (its
   * call was never made): call it once the run ends, its calls ended.
   */
  async settle(): Promise<SpentLimit | undefined> {
    // Taken over: the takeover charged and let go of this attempt's holds; only a charge is left to send.
    if (this.#takenOverBy !== undefined && !this.#hasDue()) return undefined;
    if (!this.#hasDue() && !this.#keepsWrap && !this.#unsure) return undefined;
    this.#keepsWrap = false;
    this.#unsure = false;
    return this.#step('', 0, 'RedisBudget.settle', [WRAP_CODES.drop, 0]);
  }

  #hasDue(): boolean {
    return this.#dueTools > 0 || this.#dueRelease > 0 || this.#due.some((v) => v !== 0);
  }

  async #step(
    call: string,
    hold: number,
    what: string,
    wrap: ReadonlyArray<string | number> = [],
  ): Promise<SpentLimit | undefined> {
    const [wmode = '', wusd = 0] = wrap;
    const args = [
      this.#run,
      ...this.#due,
      this.#dueTools,
      this.#dueRelease,
      call,
      hold,
      wmode,
      wusd,
      this.#attempt ?? '',
    ];
    // Sent once: should the reply be lost, a charge is not sent twice (a late one still lands).
    this.#due = CHARGE_FIELD_NAMES.map(() => 0);
    this.#dueTools = 0;
    this.#dueRelease = 0;
    this.roundTrips += 1;
    let reply: string[];
    try {
      reply = (await bounded(
        this.#redis,
        what,
        () => runScript(this.#redis, 'asmStep', [this.#keys.budget, this.#keys.runUsage], args),
        this.#timeoutMs,
      )) as string[];
    } catch (error) {
      // The script may have run (its reply lost, or it ran after the timeout): settle() lets go of what it held.
      this.#unsure = true;
      throw error;
    }
    switch (reply[0]) {
      case '!missing':
        throw gone(this.#keys);
      case '!stale':
        // Another attempt took the run over: this one's charge counted; its call is not made.
        this.#takenOverBy = Number(reply[1]);
        if (call === '') return undefined;
        throw new TakenOverError(Number(this.#run), this.#attempt ?? 0, this.#takenOverBy);
      case '!bad':
        throw new RangeError(`${what}: Redis refused ${reply[1]}`);
      case '!nohold':
        throw new Error(
          `${what}: the batch's maxCostUsd is strict and this LLM call brought no worst-case cost to hold (its loop bounds no request, or pricing knows no price for its model); it is not made (give the loop its max output tokens and pricing, or submit the batch with \`strict: false\` beside \`total.maxCostUsd\` to accept an overshoot of at most one LLM response per run in flight)`,
        );
      case '!fit':
        return doesNotFit(Number(reply[1]), hold, usageFromStrings(reply.slice(2)), this.#limits);
      case '!wrap':
        return wrapsUp(Number(reply[1]), hold, usageFromStrings(reply.slice(2)), this.#limits);
      case '!pause': {
        // The cap in force (raised, perhaps) and the raises it had: the run waits for the next.
        const [raises, cap] = reply.slice(2 + USAGE_FIELD_NAMES.length);
        const refused = doesNotFit(Number(reply[1]), hold, usageFromStrings(reply.slice(2)), {
          ...this.#limits,
          maxCostUsd: Number(cap),
        });
        return { ...refused, hold, raises: Number(raises) };
      }
      default:
        return spentFromReply(reply, this.#limits);
    }
  }
}

function gone(keys: BatchKeys): Error {
  return new Error(
    `the batch's budget is gone from Redis (${keys.budget}): Redis restarted without persistence, or the key was evicted or deleted; no call is made without it`,
  );
}

/** The step's arguments for what a call does with the run's final-call hold. */
function wrapArgs(wrap: WrapHold | undefined): Array<string | number> {
  if (wrap === undefined) return [];
  if ('final' in wrap && wrap.final === true) return [WRAP_CODES.final, 0];
  if ('keepUsd' in wrap) return [WRAP_CODES.keep, amount(wrap.keepUsd, 'hold.wrapUp.keepUsd')];
  throw new InvalidArgumentError('hold.wrapUp', '{ keepUsd } or { final: true }', wrap);
}

/** An ordinary call that does not fit beside the final calls' holds (held among `held`): the run wraps up. */
function wrapsUp(held: number, hold: number, usage: UsageTotals, limits: StrictLimits): SpentLimit {
  const max = limits.maxCostUsd ?? 0;
  return {
    limit: 'maxCostUsd',
    used: usage.costUsd + held,
    max,
    hold,
    wrapsUp: true,
    message: `shared budget: this LLM call's worst case ${formatUsd(hold)} does not fit beside the final calls' holds: ${formatUsd(usage.costUsd)} spent + ${formatUsd(held)} held of ${formatUsd(max)}`,
  };
}

function amount(value: unknown, name: string): number {
  if (!(typeof value === 'number' && Number.isFinite(value) && value >= 0 && value <= MAX_COUNTER))
    throw new InvalidArgumentError(name, `a non-negative finite number up to ${MAX_COUNTER}`, value);
  return value;
}

/** A strict cap's refusal: the call's hold does not fit beside what is spent and held. */
function doesNotFit(held: number, hold: number, usage: UsageTotals, limits: StrictLimits): SpentLimit {
  const max = limits.maxCostUsd ?? 0;
  const used = usage.costUsd + held;
  return {
    limit: 'maxCostUsd',
    used,
    max,
    message: `shared budget: this LLM call's worst case ${formatUsd(hold)} does not fit under the strict cap: ${formatUsd(usage.costUsd)} spent + ${formatUsd(held)} held of ${formatUsd(max)}`,
  };
}

/** `{''}` is room; otherwise `{limit, …usage}` (in the order of USAGE_FIELD_NAMES), worded exactly as the in-process shared budget words it. */
export function spentFromReply(reply: readonly string[], limits: StrictLimits): SpentLimit | undefined {
  if (reply[0] === '' || reply[0] === undefined) return undefined;
  if (reply[0] === 'bound') {
    // Tripped (TRIP): the usage, then why.
    const usage = usageFromStrings(reply.slice(1, 1 + USAGE_FIELD_NAMES.length));
    const why = reply[1 + USAGE_FIELD_NAMES.length] ?? 'a response passed its bound';
    return {
      limit: 'maxCostUsd',
      used: usage.costUsd,
      max: limits.maxCostUsd ?? 0,
      message: `the batch's strict cap stopped every run: ${why}`,
    };
  }
  const usage = usageFromStrings(reply.slice(1));
  return (
    describeSpent(usage, limits) ?? {
      limit: reply[0] as SpentLimit['limit'],
      used: 0,
      max: 0,
      message: `shared budget exceeded: ${reply[0]}`,
    }
  );
}

/** The first spent limit of `usage`, from the library's own Budget so the message reads as in one process. */
export function describeSpent(usage: UsageTotals, limits: StrictLimits | BudgetLimits): SpentLimit | undefined {
  let t = 0;
  // A pausing cap is never spent (it refuses holds instead), as in one process.
  const pauses = (limits as StrictLimits).whenSpent === 'pause';
  const budget = new Budget(capsOf(limits), {
    label: 'shared budget',
    elapsedWall: { clock: () => t },
    ...(pauses ? { whenSpent: 'pause' as const } : {}),
  });
  budget.charge({ ...usage, wallMs: 0 });
  t = usage.wallMs;
  return budget.spent();
}
