import { USAGE_FIELD_NAMES } from '../internal/fieldLists';
import { USAGE_FIELDS, type UsageFieldName } from '../internal/usageFields';

/** Usage summed over calls: what budgets are checked against. One number per field of `USAGE_FIELDS`. */
export type UsageTotals = { -readonly [K in keyof typeof USAGE_FIELDS]: number };

/** An increment of usage: a response's tokens and cost, a tool call, an LLM call, elapsed time. */
export type UsageDelta = Partial<UsageTotals>;

/** One LLM call, charged before every attempt; budgets only read a delta. */
export const ONE_LLM_CALL: UsageDelta = Object.freeze({ llmCalls: 1 });

/** `USAGE_FIELD_NAMES`, as a plain array. */
const FIELDS: readonly string[] = [...USAGE_FIELD_NAMES];
/** Field i of `USAGE_FIELD_NAMES` sums dollars. */
const DOLLARS: readonly boolean[] = USAGE_FIELD_NAMES.map(
  (k) => (USAGE_FIELDS[k] as { dollars?: true }).dollars === true,
);

/** Zero of every field, copied by `emptyUsage` so that every totals object has the same shape. Never written to (not frozen: copies of a frozen object take another shape). */
const ZERO: Readonly<UsageTotals> = Object.fromEntries(USAGE_FIELD_NAMES.map((k) => [k, 0])) as UsageTotals;

/** Usage of nothing yet: zero of every field. */
export function emptyUsage(): UsageTotals {
  return { ...ZERO };
}

/** `a` plus `b`, as a new object. */
export function addUsage(a: UsageTotals, b: UsageDelta): UsageTotals {
  const sum = { ...ZERO };
  for (let i = 0; i < USAGE_FIELD_NAMES.length; i++) {
    const key = USAGE_FIELD_NAMES[i]!;
    const value = a[key] + (b[key] ?? 0);
    sum[key] = DOLLARS[i] ? roundCost(value) : value;
  }
  return sum;
}

/** Adds `b` to `a` in place, rounding as `addUsage` does. Keys of `b` that are not usage fields are ignored. */
export function addUsageTo(a: UsageTotals, b: UsageDelta): void {
  // Named fields: the turncore bench's adapter turn takes 6% more instructions by the list alone
  // (156,666 against 147,878); a field not named here is added by the list, never dropped.
  for (const key in b) {
    const value = b[key as UsageFieldName];
    if (value === undefined) continue;
    switch (key as UsageFieldName) {
      case 'inputTokens':
        a.inputTokens += value;
        break;
      case 'outputTokens':
        a.outputTokens += value;
        break;
      case 'costUsd':
        a.costUsd = roundCost(a.costUsd + value);
        break;
      case 'toolCalls':
        a.toolCalls += value;
        break;
      case 'llmCalls':
        a.llmCalls += value;
        break;
      case 'wallMs':
        a.wallMs += value;
        break;
      default:
        addByName(a, key, value);
    }
  }
}

/** Adds `value` to the field `key` of `a`, by the list; nothing when `key` is not a usage field. */
function addByName(a: UsageTotals, key: string, value: number): void {
  const i = FIELDS.indexOf(key);
  if (i === -1) return;
  const field = USAGE_FIELD_NAMES[i]!;
  a[field] = DOLLARS[i] ? roundCost(a[field] + value) : a[field] + value;
}

/** Dollars rounded to 1e-10. */
export function roundCost(usd: number): number {
  return Math.round(usd * 1e10) / 1e10;
}
