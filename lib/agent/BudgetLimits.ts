import { LIMIT_NAMES, limitUsed, USAGE_FIELD_NAMES } from '../internal/fieldLists';
import { LIMITS } from '../internal/limits';
import { InvalidArgumentError } from '../machine/InvalidArgumentError';
import type { BoundExceeded } from './boundExceeded';
import type { UsageTotals } from './UsageTotals';
import { assertBudgetEnding, isEndingKey, type BudgetEndings } from './BudgetEndings';

/**
 * Caps on usage. A limit is spent when usage reaches it (≥). Leave a limit out for no cap.
 * One optional number per limit of `LIMITS`, and `strict`.
 */
export type BudgetLimits = { -readonly [K in keyof typeof LIMITS]?: number } & {
  /**
   * Whether `maxCostUsd` is a cap that is never crossed. Default true: before each LLM attempt
   * its worst-case cost (from the loop's `llmCallBound` and `pricing`) is held against the cap,
   * and a call that does not fit is not made (or its max output tokens are lowered to fit). The
   * unused part of the hold is released when a priced response arrives; an attempt whose cost
   * stays unknown (no price, a failure after its request may have left) is charged its whole
   * hold. A loop whose calls cannot be bounded is refused before anything runs. `false`
   * accepts an overshoot of at most one LLM response per run in flight. `true` needs `maxCostUsd`.
   */
  strict?: boolean;
} & BudgetEndings;

/** The name of one limit in `BudgetLimits`, as reported when it runs out. */
export type BudgetLimitName = keyof typeof LIMITS;

/** A spent limit, with the numbers to say so. */
export interface SpentLimit {
  limit: BudgetLimitName;
  used: number;
  max: number;
  /** `budget exceeded: $0.6200 of $0.5000 after 2 LLM calls`; a shared budget's adds `; this run: cost $0.0300 after 1 LLM call` */
  message: string;
  /** A strict cap's refusal: the worst-case cost (USD) of the call that did not fit beside `used` (spent plus held). */
  hold?: number;
  /**
   * A pausing cap's refusal (`whenSpent: 'pause'`): how many raises it had then. The run waits
   * for a raise after that one; a raise that came meanwhile lets it try again at once.
   */
  raises?: number;
  /**
   * An external budget's refusal of an ordinary call beside the final calls' holds
   * (`budget.wrapUp`): the run wraps up instead, its final call's hold kept for it.
   */
  wrapsUp?: boolean;
  /** A strict cap's stop after a response passed its bound (the server ignored max tokens): by how much. */
  boundExceeded?: BoundExceeded;
}

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
    // How the run ends within its cap (`wrapUp`, `visible`): see BudgetEndings.
    if (isEndingKey(key)) {
      assertBudgetEnding(limits as Record<string, unknown>, key, name);
      continue;
    }
    if (key === 'strict') {
      const strict = (limits as Record<string, unknown>).strict;
      if (strict !== undefined && typeof strict !== 'boolean')
        throw new InvalidArgumentError(`${name}.strict`, 'true, false or undefined', strict);
      if (strict === true && (limits as Record<string, unknown>).maxCostUsd === undefined)
        throw new InvalidArgumentError(
          `${name}.strict`,
          'left out unless `maxCostUsd` is set beside it (a strict cap is a dollar cap)',
          strict,
        );
      continue;
    }
    if (!(LIMIT_NAMES as readonly string[]).includes(key)) {
      throw new InvalidArgumentError(
        `${name}.${key}`,
        `one of the limits ${LIMIT_NAMES.join(', ')} (unknown key)`,
        (limits as Record<string, unknown>)[key],
      );
    }
    const value = (limits as Record<string, unknown>)[key];
    if (value !== undefined && !(typeof value === 'number' && Number.isFinite(value) && value >= 0)) {
      throw new InvalidArgumentError(`${name}.${key}`, 'a non-negative finite number', value);
    }
  }
}

/** Pure: the first limit `usage` has reached, or undefined while every limit has room. */
export function spentLimit(
  usage: UsageTotals,
  limits: BudgetLimits | undefined,
  label = 'budget',
): SpentLimit | undefined {
  if (typeof usage !== 'object' || usage === null)
    throw new InvalidArgumentError('usage', `usage totals { ${USAGE_FIELD_NAMES.join(', ')} }`, usage);
  if (limits === undefined) return undefined;
  assertBudgetLimits(limits, 'limits');
  return checkedSpentLimit(usage, limits, label);
}

/** `spentLimit` on limits already checked: each limit of LIMITS, in order, on the sum of the usage fields it measures. */
export function checkedSpentLimit(usage: UsageTotals, limits: BudgetLimits, label: string): SpentLimit | undefined {
  for (const limit of LIMIT_NAMES) {
    const max = limits[limit];
    if (max === undefined) continue;
    const used = limitUsed(usage, limit);
    if (used >= max) return spentAt(limit, used, max, usage.llmCalls, label);
  }
  return undefined;
}

/** `limit` spent: `used` of `max`, said as `budget exceeded: $0.6200 of $0.5000 after 2 LLM calls`. */
export function spentAt(
  limit: BudgetLimitName,
  used: number,
  max: number,
  llmCalls: number,
  label: string,
): SpentLimit {
  return {
    limit,
    used,
    max,
    // The LLM calls made say nothing more when they are the limit: `3 of 3 LLM calls`, not `… after 3 LLM calls`.
    message: `${label} exceeded: ${LIMITS[limit].against(used, max)}${limit === 'maxLlmCalls' ? '' : ` after ${llmCalls} LLM call${llmCalls === 1 ? '' : 's'}`}`,
  };
}
