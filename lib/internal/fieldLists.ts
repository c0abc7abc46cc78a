// What the code reads off the two lists, USAGE_FIELDS and LIMITS: their names in order, the
// fields a response reports, the order of report rows, and what a limit measures. Kept apart
// from the lists, which are data only.
import { LIMITS, type LimitName } from './limits';
import {
  USAGE_FIELDS,
  type ChargeFieldName,
  type ResponseFieldName,
  type UsageFieldName,
  type UsageGrowth,
} from './usageFields';

/** Every usage field, in order. */
export const USAGE_FIELD_NAMES: readonly UsageFieldName[] = Object.freeze(
  Object.keys(USAGE_FIELDS) as UsageFieldName[],
);

/** The fields an LLM response reports, in order. */
export const RESPONSE_FIELD_NAMES: readonly ResponseFieldName[] = Object.freeze(
  USAGE_FIELD_NAMES.filter((k): k is ResponseFieldName => USAGE_FIELDS[k].grows === 'response'),
);

/** The fields an LLM call's charge carries, in order: what its response reports, and what the charge rule adds (uncertain and released dollars). */
export const CHARGE_FIELD_NAMES: readonly ChargeFieldName[] = Object.freeze(
  USAGE_FIELD_NAMES.filter((k): k is ChargeFieldName => {
    const grows = USAGE_FIELDS[k].grows;
    return grows === 'response' || grows === 'charge';
  }),
);

/** Every limit name, in the order they are checked. */
export const LIMIT_NAMES: readonly LimitName[] = Object.freeze(Object.keys(LIMITS) as LimitName[]);

/** How usage grows, in the order a turn spends: what responses report, then LLM calls, tool calls, time. */
const GROWTH_ORDER: readonly UsageGrowth[] = ['response', 'charge', 'llm', 'tool', 'time'];

/** The limits in the order report tables list them: by what they measure, as a turn spends, and in check order within that. */
export const LIMIT_ROWS: readonly LimitName[] = Object.freeze(
  [...LIMIT_NAMES].sort(
    (a, b) =>
      GROWTH_ORDER.indexOf(USAGE_FIELDS[LIMITS[a].of[0]].grows) -
      GROWTH_ORDER.indexOf(USAGE_FIELDS[LIMITS[b].of[0]].grows),
  ),
);

/** What `usage` spends of what `limit` caps: the sum of the fields it measures. */
export function limitUsed(usage: Readonly<Record<UsageFieldName, number>>, limit: LimitName): number {
  const of: readonly UsageFieldName[] = LIMITS[limit].of;
  let used = usage[of[0]!];
  for (let i = 1; i < of.length; i++) used += usage[of[i]!];
  return used;
}

/**
 * The usage one LLM response reports, as a charge: each field that grows by `response`, read
 * from the response's usage by its name (0 when absent), with `costUsd` as reported or priced
 * (undefined: $0).
 */
export function responseUsage(
  usage: { readonly [K in ResponseFieldName]?: number | undefined } | undefined,
  costUsd: number | undefined,
): Record<ResponseFieldName, number> {
  const delta = {} as Record<ResponseFieldName, number>;
  for (const key of RESPONSE_FIELD_NAMES) delta[key] = usage?.[key] ?? 0;
  delta.costUsd = costUsd ?? 0;
  return delta;
}
