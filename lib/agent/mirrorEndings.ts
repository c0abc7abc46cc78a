import { extendTable } from '../machine/extendTable';
import { InvalidArgumentError } from '../machine/InvalidArgumentError';
import type { TransitionTable } from '../machine/TransitionTable';
import { DEFAULT_TABLE } from '../machine/transitions';
import type { LoopHonours, Pricing } from './AgentLoop';
import type { Budget } from './Budget';
import { resolveEndings } from './BudgetEndings';
import type { ExternalBudget } from './ExternalBudget';
import { WRAP_UP_EXTENSION } from './extensionStates';
import { MirrorWrapUp, type MirrorBoundOf } from './MirrorWrapUp';
import { boundProblem } from './reserveLLMCall';
import { MIRROR_CANNOT } from './optionKeys';
import { outsideEndings, refuseEndings } from './refuseEndings';

/**
 * What an integration says of itself when it makes or is given a mirror: the request flags it
 * honours (`wrapUp`: it makes the final call `modelCallPlan` asks for; `budgetNote`: it adds the
 * note), and, for those it does not, why its framework does not let it (under `budget.wrapUp`
 * and `budget.visible`), for the refusal.
 */
export interface MirrorIntegration {
  honours?: LoopHonours;
  cannot?: Readonly<Partial<Record<'budget.wrapUp' | 'budget.visible', string>>>;
}

/** Why a mirror refuses the endings of a budget outside the process (a BullMQ batch's `total`). */
const OUTSIDE_CANNOT: Readonly<Record<string, string>> = Object.freeze({
  'budget.wrapUp':
    "a mirror keeps no final call's hold in a budget outside the process, so that budget could refuse the answer",
  'budget.visible': 'a mirror does not ask a budget outside the process for its figures',
});

const WHERE = 'a framework run (StepMirror)';

/**
 * A `StepMirror`'s endings (`budget.wrapUp`, `budget.visible`): those its integration does not
 * honour refused by name, as are those of budgets outside the process; a `wrapUp` needs pricing
 * (or `reserveUsd`) and no outside dollar cap that could refuse the final call. Gives the final
 * call's keeper and the table (`base`, the stall table when given, with WRAP_UP_EXTENSION) when asked for.
 */
export function mirrorEndings(
  budgets: readonly Budget[],
  external: readonly ExternalBudget[],
  pricing: Pricing | undefined,
  honours: LoopHonours,
  base: TransitionTable<string> | undefined,
): { wrap: MirrorWrapUp | undefined; table: TransitionTable<string> | undefined } {
  refuseEndings(budgets, MIRROR_CANNOT, WHERE, honours);
  refuseEndings(outsideEndings(external), OUTSIDE_CANNOT, WHERE);
  const endings = resolveEndings(budgets.map((b) => b.limits));
  if (endings.wrapUp === undefined)
    return { wrap: endings.visible ? new MirrorWrapUp(endings, pricing) : undefined, table: base };
  if (pricing === undefined && endings.wrapUp.reserveUsd === undefined)
    throw new InvalidArgumentError(
      'pricing',
      'a function pricing the calls, since `budget.wrapUp` is set: the worst case of each call and of the final one is held in dollars',
      pricing,
    );
  const outside = external.findIndex((b) => b.capsCost === true);
  if (outside !== -1)
    throw new InvalidArgumentError(
      `externalBudgets[${outside}]`,
      "left out beside `budget.wrapUp` on a mirror: a dollar cap outside the process that keeps no mirror's final call could refuse the answer",
      external[outside],
    );
  const table = extendTable(base ?? (DEFAULT_TABLE as TransitionTable<string>), WRAP_UP_EXTENSION);
  return { wrap: new MirrorWrapUp(endings, pricing), table: table as TransitionTable<string> };
}

/** The first ending key a budget asks for, and its value, to name in a refusal. */
export function endingAsked(budgets: readonly Pick<Budget, 'limits' | 'label'>[]): [string, unknown] {
  for (const b of budgets)
    for (const key of ['wrapUp', 'visible'] as const)
      if (b.limits[key] !== undefined && b.limits[key] !== false) return [`${b.label}.${key}`, b.limits[key]];
  return ['budget.wrapUp', undefined];
}

/** `boundOf` whose bounds are checked: a malformed one is refused by name, as `modelCallStart` refuses it. */
export function checkedBoundOf(boundOf: MirrorBoundOf): MirrorBoundOf {
  return (flags) => {
    const bound = boundOf(flags);
    if (typeof bound === 'string') return bound;
    const problem = boundProblem(bound);
    if (problem !== undefined)
      throw new InvalidArgumentError('bound', `{ inputTokens, maxOutputTokens, model? } (${problem})`, bound);
    return bound;
  };
}
