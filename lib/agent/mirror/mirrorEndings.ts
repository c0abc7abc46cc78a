import { extendTable } from '../../machine/extendTable';
import { InvalidArgumentError } from '../../machine/InvalidArgumentError';
import type { TransitionTable } from '../../machine/TransitionTable';
import { DEFAULT_TABLE } from '../../machine/transitions';
import type { LoopHonours, Pricing } from '../AgentLoop';
import type { Budget } from '../money/Budget';
import { resolveEndings } from '../BudgetEndings';
import type { ExternalBudget } from '../money/ExternalBudget';
import { WRAP_UP_EXTENSION } from '../extensionStates';
import type { MirrorBoundOf } from './MirrorCallFlags';
import { MirrorWrapUp } from './MirrorWrapUp';
import { boundProblem } from '../calls/reserveLLMCall';
import { MIRROR_CANNOT } from '../options/optionKeys';
import { outsideEndings, refuseEndings } from '../endings/refuseEndings';

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

const WHERE = 'a framework run (StepMirror)';

/**
 * A `StepMirror`'s endings (`budget.wrapUp`, `budget.visible`), of its budgets and of the
 * external budgets' `endings` (a BullMQ batch's `total`), as the adapter resolves them: those its
 * integration does not honour refused by name; a `wrapUp` needs pricing (or `finalCallUsd`) and no
 * outside dollar cap that keeps no final call's hold (`holdsWrapUp`), which could refuse the
 * final call. Gives the final call's keeper and the table (`base`, the stall table when given,
 * with WRAP_UP_EXTENSION) when asked for.
 */
export function mirrorEndings(
  budgets: readonly Budget[],
  external: readonly ExternalBudget[],
  pricing: Pricing | undefined,
  honours: LoopHonours,
  base: TransitionTable<string> | undefined,
): { wrap: MirrorWrapUp | undefined; table: TransitionTable<string> | undefined } {
  const outside = outsideEndings(external);
  refuseEndings([...budgets, ...outside], MIRROR_CANNOT, WHERE, honours);
  const endings = resolveEndings([...budgets, ...outside].map((b) => b.limits));
  if (endings.wrapUp === undefined)
    return { wrap: endings.visible ? new MirrorWrapUp(endings, pricing, external) : undefined, table: base };
  // Named as it was given: `budget.wrapUp`, a shared pool's, or a batch's `total.wrapUp`.
  const where = `${[...budgets, ...outside].find((b) => b.limits.wrapUp !== undefined)!.label}.wrapUp`;
  if (pricing === undefined && endings.wrapUp.finalCallUsd === undefined)
    throw new InvalidArgumentError(
      'pricing',
      `a function pricing the calls, since \`${where}\` is set: the worst case of each call and of the final one is held in dollars`,
      pricing,
    );
  const unkept = external.findIndex((b) => b.capsCost === true && b.holdsWrapUp !== true);
  if (unkept !== -1)
    throw new InvalidArgumentError(
      `externalBudgets[${unkept}]`,
      `left out beside \`${where}\` on a mirror: a dollar cap outside the process that holds no final call (its \`holdsWrapUp\` is not true) could refuse the answer`,
      external[unkept],
    );
  const table = extendTable(base ?? (DEFAULT_TABLE as TransitionTable<string>), WRAP_UP_EXTENSION);
  return { wrap: new MirrorWrapUp(endings, pricing, external), table: table as TransitionTable<string> };
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
