import { formatDuration } from '../internal/formatDuration';
import { InvalidArgumentError } from '../machine/InvalidArgumentError';
import { totalTokens, type UsageTotals } from './UsageTotals';

/** Caps on usage. A limit is spent when usage reaches it (≥). Leave a limit out for no cap. */
export interface BudgetLimits {
  maxCostUsd?: number;
  /** Input plus output tokens. */
  maxTokens?: number;
  maxToolCalls?: number;
  maxLlmCalls?: number;
  maxWallMs?: number;
}

/** The name of one limit in `BudgetLimits`, as reported when it runs out. */
export type BudgetLimitName = keyof BudgetLimits;

/** A spent limit, with the numbers to say so. */
export interface SpentLimit {
  limit: BudgetLimitName;
  used: number;
  max: number;
  /** `budget exceeded: $0.62 of $0.50 after 2 LLM calls` */
  message: string;
}

/** Every limit, in the order they are checked (the first spent one is reported). */
export const LIMIT_NAMES: readonly BudgetLimitName[] = ['maxCostUsd', 'maxTokens', 'maxToolCalls', 'maxLlmCalls', 'maxWallMs'];

/**
 * Checks limits given by a caller: an object whose known keys are non-negative finite numbers
 * (or undefined). `name` is how the caller wrote it (`budget`, `perRun`, `total`), so the error
 * names the option exactly: ``Expected `budget.maxCostUsd` to be a non-negative number, got `-1` (number)``.
 */
export function assertBudgetLimits(limits: unknown, name: string): asserts limits is BudgetLimits | undefined {
  if (limits === undefined) return;
  if (typeof limits !== 'object' || limits === null || Array.isArray(limits)) {
    throw new InvalidArgumentError(name, `an object with any of ${LIMIT_NAMES.join(', ')}`, limits);
  }
  for (const key of Object.keys(limits)) {
    if (!(LIMIT_NAMES as readonly string[]).includes(key)) {
      throw new InvalidArgumentError(`${name}.${key}`, `one of the limits ${LIMIT_NAMES.join(', ')} (unknown key)`, (limits as Record<string, unknown>)[key]);
    }
    const value = (limits as Record<string, unknown>)[key];
    if (value !== undefined && !(typeof value === 'number' && Number.isFinite(value) && value >= 0)) {
      throw new InvalidArgumentError(`${name}.${key}`, 'a non-negative finite number', value);
    }
  }
}

function used(usage: UsageTotals, limit: BudgetLimitName): number {
  switch (limit) {
    case 'maxCostUsd':
      return usage.costUsd;
    case 'maxTokens':
      return totalTokens(usage);
    case 'maxToolCalls':
      return usage.toolCalls;
    case 'maxLlmCalls':
      return usage.llmCalls;
    case 'maxWallMs':
      return usage.wallMs;
  }
}

/** Decimals that tell `used` from `max` apart: `$0.101 of $0.100`, not `$0.10 of $0.10`. */
function centsDigits(used: number, max: number): number {
  let digits = 2;
  while (digits < 6 && used !== max && used.toFixed(digits) === max.toFixed(digits)) digits += 1;
  return digits;
}

function amount(limit: BudgetLimitName, value: number, digits = 2): string {
  switch (limit) {
    case 'maxCostUsd':
      return `$${value.toFixed(digits)}`;
    case 'maxTokens':
      return `${value.toLocaleString('en-US')} tokens`;
    case 'maxToolCalls':
      return `${value} tool call${value === 1 ? '' : 's'}`;
    case 'maxLlmCalls':
      return `${value} LLM call${value === 1 ? '' : 's'}`;
    case 'maxWallMs':
      return formatDuration(value);
  }
}

/** Pure: the first limit `usage` has reached, or undefined while every limit has room. */
export function spentLimit(usage: UsageTotals, limits: BudgetLimits | undefined, label = 'budget'): SpentLimit | undefined {
  if (typeof usage !== 'object' || usage === null) throw new InvalidArgumentError('usage', 'usage totals { costUsd, inputTokens, outputTokens, toolCalls, llmCalls, wallMs }', usage);
  if (limits === undefined) return undefined;
  assertBudgetLimits(limits, 'limits');
  return checkedSpentLimit(usage, limits, label);
}

/**
 * `spentLimit` on limits already checked (a Budget's, frozen when it was made): it runs before
 * every call of every turn. `names` may leave out the limits that are not set, in order.
 */
export function checkedSpentLimit(usage: UsageTotals, limits: BudgetLimits, label: string, names: readonly BudgetLimitName[] = LIMIT_NAMES): SpentLimit | undefined {
  for (const limit of names) {
    const max = limits[limit];
    if (max === undefined) continue;
    const value = used(usage, limit);
    if (value >= max) {
      const calls = `${usage.llmCalls} LLM call${usage.llmCalls === 1 ? '' : 's'}`;
      const digits = centsDigits(value, max);
      const of = limit === 'maxWallMs' ? `${amount(limit, value)} of wall time, of ${amount(limit, max)}` : `${amount(limit, value, digits)} of ${amount(limit, max, digits)}`;
      return { limit, used: value, max, message: `${label} exceeded: ${of} after ${calls}` };
    }
  }
  return undefined;
}
