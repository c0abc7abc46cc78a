// How a batch's budget is laid out in Redis, derived from the library's lists of usage fields
// and limits (lib/internal): the budget hash holds a counter per usage field, the batch's start
// for wall time, and a field per `total` limit; the run-usage hash holds `<index>:<code>` per
// counter. The Lua scripts (scripts.ts) are generated from the same lists.
import { addUsage, emptyUsage } from 'agent-state-machine/internal';
import { type BudgetLimits, type UsageTotals } from 'agent-state-machine';
import { LIMIT_NAMES, USAGE_FIELD_NAMES } from '../../internal/fieldLists';
import { LIMITS } from '../../internal/limits';
import { USAGE_FIELDS, type UsageFieldName } from '../../internal/usageFields';

/** Where wall time sits in `USAGE_FIELD_NAMES`: Redis keeps the batch's start there, and tells the time by its clock. */
export const TIME_INDEX = USAGE_FIELD_NAMES.findIndex((k) => USAGE_FIELDS[k].grows === 'time');

/** The hash field of each usage field, in the order of `USAGE_FIELD_NAMES` (for wall time, the batch's start). */
export const USAGE_CODES: readonly string[] = USAGE_FIELD_NAMES.map((k) => USAGE_FIELDS[k].code);

/** The hash field `reserve(kind)` counts one call in. */
export const CALL_CODES: Readonly<Record<'llm' | 'tool', string>> = {
  llm: codeOf('llm'),
  tool: codeOf('tool'),
};

/** The budget hash field of the dollars held by LLM calls in flight under a strict `maxCostUsd`. */
export const HELD_CODE = 'hc';
/**
 * The run-usage field (`<index>:hw`) of the dollars a run holds for its final call
 * (`budget.wrapUp`); they are counted in its `hc` and the batch's too.
 */
export const WRAP_HELD_CODE = 'hw';
/**
 * What a step does with the run's final-call hold: keep new dollars beside an ordinary call, swap
 * it for a final call's hold, drop it as the run ends (with every other hold the run has left in
 * Redis), or write the run off as lost (`lost`: the holds of its calls charged as uncertain, then
 * every hold dropped).
 */
export const WRAP_CODES = Object.freeze({ keep: 'k', final: 'f', drop: 'd', lost: 'l' } as const);
/**
 * The run-usage fields of a run's fence (`<index>:fa`: the attempt that took it over last; an
 * earlier attempt's steps are stale) and of its credit (`<index>:zc`: the call holds a takeover
 * charged as uncertain, which a stale attempt's charges take the place of). See stepFence.ts.
 */
export const FENCE_CODE = 'fa';
export const CREDIT_CODE = 'zc';
/** The budget hash field set to 1 when `maxCostUsd` is strict. */
export const STRICT_CODE = 'sc';
/** The budget hash field set to 1 when the strict dollar cap pauses (`whenSpent: 'pause'`) instead of stopping the batch. */
export const PAUSES_CODE = 'wp';
/** The budget hash field counting the raises of a pausing cap. */
export const RAISES_CODE = 'rc';
/**
 * The budget hash field set when a pausing cap refused a call and no raise came since: tasks
 * not started wait. Its value is the raise count the refusal was made under.
 */
export const PAUSED_CODE = 'pz';

/**
 * Limits as `submitBatch` takes them: `BudgetLimits`, `strict` beside `maxCostUsd` (strict
 * unless `false`), and `whenSpent` (`'pause'`: a call the strict cap refuses parks its run until
 * the cap is raised; default `'stop'`).
 */
export type StrictLimits = BudgetLimits & { strict?: boolean; whenSpent?: 'pause' | 'stop' };

/** A batch's `total` limits as budget hash fields: `{ mc: 5, mlc: 100 }` (and `sc: 1` when the dollar cap is strict). */
export function limitFields(limits: StrictLimits | undefined): Record<string, number> {
  const fields: Record<string, number> = {};
  for (const limit of LIMIT_NAMES) {
    const max = limits?.[limit];
    if (max !== undefined) fields[LIMITS[limit].code] = max;
  }
  // Strict by default, as in one process: only `strict: false` lets the dollar cap be passed.
  if (limits?.maxCostUsd !== undefined && limits.strict !== false) fields[STRICT_CODE] = 1;
  if (limits?.whenSpent === 'pause') Object.assign(fields, { [PAUSES_CODE]: 1, [RAISES_CODE]: 0 });
  return fields;
}

/** The caps alone, without `strict` and `whenSpent` (for `Budget`, which words the messages). */
export function capsOf(limits: StrictLimits | undefined): BudgetLimits {
  if (limits === undefined) return {};
  const { strict: _strict, whenSpent: _whenSpent, ...caps } = limits;
  return caps;
}

/** Usage from strings in the order of `USAGE_FIELD_NAMES` (a script's reply, an HMGET of `USAGE_CODES`); a missing or unreadable one is 0. */
export function usageFromStrings(values: ReadonlyArray<string | null | undefined>): UsageTotals {
  const read = emptyUsage();
  USAGE_FIELD_NAMES.forEach((key: UsageFieldName, i) => {
    read[key] = Number(values[i] ?? 0) || 0;
  });
  // Redis adds dollars as floats: summed through addUsage, they are rounded as the library rounds them.
  return addUsage(emptyUsage(), read);
}

function codeOf(kind: 'llm' | 'tool'): string {
  const field = USAGE_FIELD_NAMES.find((k) => USAGE_FIELDS[k].grows === kind);
  if (field === undefined)
    throw new Error(`no usage field grows by '${kind}': USAGE_FIELDS needs one for ExternalBudget.reserve('${kind}')`);
  return USAGE_FIELDS[field].code;
}
