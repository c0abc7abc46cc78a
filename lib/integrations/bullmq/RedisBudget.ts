import type { Redis } from 'ioredis';
import {
  Budget,
  InvalidArgumentError,
  type BudgetLimits,
  type ExternalBudget,
  type SpentLimit,
  type UsageDelta,
  type UsageTotals,
} from 'agent-state-machine';
import { RESPONSE_FIELD_NAMES } from '../../internal/fieldLists';
import { USAGE_FIELDS } from '../../internal/usageFields';
import type { BatchKeys } from './batchKeys';
import { CALL_CODES, usageFromStrings } from './budgetFields';
import { runScript } from './redisScripts';

/**
 * A batch's `total` limits, kept in Redis and shared by every worker: the `ExternalBudget`
 * each run's adapter consults before every LLM call and tool call and charges as responses
 * arrive. Each `reserve` and `charge` is one Lua script — one round trip, atomic — so call
 * counts never pass their caps however many workers ask at once, and spend passes the dollar
 * or token cap by at most one LLM response per run in flight in the whole cluster (a
 * response's cost is known only after it). `maxWallMs` is the batch's elapsed time on Redis's
 * clock. Call counts are counted by `reserve`; `charge` adds tokens and cost, and a charge of
 * neither (wall time only) makes no round trip.
 */
export class RedisBudget implements ExternalBudget {
  readonly #redis: Redis;
  readonly #keys: BatchKeys;
  readonly #limits: BudgetLimits;
  readonly #run: string;

  /** One per run: `run` is the run's index in the batch, so its own spend is kept too. */
  constructor(redis: Redis, keys: BatchKeys, limits: BudgetLimits, run: number) {
    this.#redis = redis;
    this.#keys = keys;
    this.#limits = limits;
    this.#run = String(run);
  }

  async reserve(kind: 'llm' | 'tool'): Promise<SpentLimit | undefined> {
    if (kind !== 'llm' && kind !== 'tool') throw new InvalidArgumentError('kind', "'llm' or 'tool'", kind);
    const reply = (await runScript(
      this.#redis,
      'asmReserve',
      [this.#keys.budget, this.#keys.runUsage],
      [CALL_CODES[kind], this.#run],
    )) as string[];
    return spentFromReply(reply, this.#limits);
  }

  async charge(delta: UsageDelta): Promise<SpentLimit | undefined> {
    if (typeof delta !== 'object' || delta === null)
      throw new InvalidArgumentError('delta', 'an object of usage numbers', delta);
    // What responses report (tokens, cost); Redis adds whole numbers to all but dollars.
    const amounts = RESPONSE_FIELD_NAMES.map((key) => {
      const value = checked(delta[key], key);
      return 'dollars' in USAGE_FIELDS[key] ? value : Math.round(value);
    });
    // Wall time and call counts change nothing here (the batch's wall is Redis's clock, calls are
    // counted by reserve): no round trip. A limit spent elsewhere is found by the next reserve.
    if (amounts.every((amount) => amount === 0)) return undefined;
    const reply = (await runScript(
      this.#redis,
      'asmCharge',
      [this.#keys.budget, this.#keys.runUsage],
      [this.#run, ...amounts],
    )) as string[];
    return spentFromReply(reply, this.#limits);
  }
}

function checked(value: number | undefined, key: string): number {
  if (value === undefined) return 0;
  if (!(typeof value === 'number' && Number.isFinite(value) && value >= 0))
    throw new InvalidArgumentError(`delta.${key}`, 'a non-negative finite number', value);
  return value;
}

/** `{''}` is room; otherwise `{limit, …usage}` (in the order of USAGE_FIELD_NAMES), worded exactly as the in-process shared budget words it. */
export function spentFromReply(reply: readonly string[], limits: BudgetLimits): SpentLimit | undefined {
  if (reply[0] === '' || reply[0] === undefined) return undefined;
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
export function describeSpent(usage: UsageTotals, limits: BudgetLimits): SpentLimit | undefined {
  let t = 0;
  const budget = new Budget(limits, { label: 'shared budget', elapsedWall: { clock: () => t } });
  budget.charge({ ...usage, wallMs: 0 });
  t = usage.wallMs;
  return budget.spent();
}
