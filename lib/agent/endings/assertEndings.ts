import { formatUsd } from '../../internal/formatUsd';
import { InvalidArgumentError } from '../../machine/InvalidArgumentError';
import type { TransitionTable } from '../../machine/TransitionTable';
import type { AgentLoop, LLMCallBound, Pricing } from '../AgentLoop';
import type { Budget } from '../money/Budget';
import type { ExternalBudget } from '../money/ExternalBudget';
import { resolveEndings } from '../BudgetEndings';
import { assertTableCarries } from './requiredEdges';
import { unboundedWhy } from '../../internal/unboundedLoop';
import { worstCaseCost } from '../money/worstCaseCost';

/**
 * Refuses, when the adapter is made, a `budget.wrapUp` or `budget.visible` (of its own budget,
 * a shared one, or a turn's) that this loop, table or pricing cannot honour: a loop that does
 * not say it honours the flag, a loop without `llmCallBound` or one whose requests ask for no
 * max output tokens (its final call could not be held, strict cap or not), no `pricing`, a table
 * without `WRAP_UP_EXTENSION`, and a final call whose worst case, asked of the loop at once (when
 * it answers synchronously), could never be held within the cap. `tableGiven`: the caller passed
 * `table` (the refusal of one without WRAP_UP_EXTENSION says how to extend it).
 */
export function assertEndings(
  settings: {
    agent: AgentLoop;
    pricing: Pricing | undefined;
    machine: { table: unknown };
    external: readonly ExternalBudget[];
  },
  budgets: readonly Budget[],
  tableGiven?: boolean,
): void {
  const { agent, pricing } = settings;
  const table = settings.machine.table as TransitionTable<string>;
  const external = settings.external;
  const { wrapUp, visible } = resolveEndings([
    ...budgets.map((b) => b.limits),
    ...external.map((b) => b.endings ?? {}),
  ]);
  if (visible && agent.honours?.budgetNote !== true)
    throw new InvalidArgumentError(
      'budget.visible',
      'left out for a loop that does not say it adds the budget note to its requests: add `ctx.budgetNote` to each request your loop sends and count it in `llmCallBound`, then set `honours: { budgetNote: true }` on it (the ready-made loops do)',
      true,
    );
  if (wrapUp === undefined) return;
  const named = budgets.find((b) => b.limits.wrapUp !== undefined);
  const outsideAt = external.findIndex((b) => b.endings?.wrapUp !== undefined);
  const where =
    named !== undefined
      ? `${named.label}.wrapUp`
      : (external[outsideAt]!.label ?? `externalBudgets[${outsideAt}].endings`) + '.wrapUp';
  if (agent.honours?.wrapUp !== true)
    throw new InvalidArgumentError(
      where,
      'left out for a loop that does not say it makes the final call the budget asks for: when `ctx.wrapUp` is set, send that call with no tools and the instruction `ctx.wrapUp` holds as its last user message, then set `honours: { wrapUp: true }` on your loop (the ready-made loops do)',
      named?.limits.wrapUp ?? external[outsideAt]!.endings!.wrapUp,
    );
  if (typeof agent.llmCallBound !== 'function')
    throw new InvalidArgumentError(
      'agent.llmCallBound',
      `a function bounding each request, since ${where} is set: the final call's worst case is held before each call`,
      agent.llmCallBound,
    );
  const unbounded = unboundedWhy(agent);
  if (unbounded !== undefined)
    throw new InvalidArgumentError(
      unbounded.setting,
      `set, since ${where} is set: the final call's worst case is held before each call, strict cap or not, but ${unbounded.why} (give ${unbounded.remedy})`,
      undefined,
    );
  if (pricing === undefined && wrapUp.finalCallUsd === undefined)
    throw new InvalidArgumentError(
      'pricing',
      `a function pricing the calls, since ${where} is set: the worst case of each call and of the final one is held in dollars`,
      pricing,
    );
  assertTableCarries(table, { approval: false, timeout: false, wrapUp: where }, tableGiven);
  // A budget outside the process that keeps no final call's hold could refuse the final call.
  const outside = external.findIndex((b) => b.capsCost === true && b.holdsWrapUp !== true);
  if (outside !== -1)
    throw new InvalidArgumentError(
      `externalBudgets[${outside}]`,
      `left out beside ${where}: a dollar cap outside the process that holds no final call (its \`holdsWrapUp\` is not true) could refuse the answer`,
      external[outside],
    );
  // The smallest final call (an empty user message), when the loop bounds it synchronously.
  let bound: unknown;
  try {
    bound = agent.llmCallBound(
      { operation: 'sendUserMessage', message: '' },
      { signal: new AbortController().signal, turn: 1, attempt: 1, wrapUp: wrapUp.instruction },
    );
  } catch {
    return; // the first call says why
  }
  if (typeof bound !== 'object' || bound === null || bound instanceof Promise) return;
  const worst = wrapUp.finalCallUsd ?? worstCaseCost(bound as LLMCallBound, pricing).costUsd;
  for (const b of budgets) {
    const max = b.limits.maxCostUsd;
    if (worst === undefined || max === undefined || worst <= max - b.usage.costUsd) continue;
    throw new InvalidArgumentError(
      `${b.label}.maxCostUsd`,
      `room for the final call of ${where}: its worst case is ${formatUsd(worst)}, and ${formatUsd(Math.max(0, max - b.usage.costUsd))} of ${formatUsd(max)} is left`,
      max,
    );
  }
}

/**
 * The option that asks to end within the cap, as a refusal names it (`budget.wrapUp`, a shared
 * budget's, an external budget's `endings.wrapUp`), or undefined when none does.
 */
export function wrapUpAsked(budgets: readonly Budget[], external: readonly ExternalBudget[]): string | undefined {
  const named = budgets.find((b) => b.limits.wrapUp !== undefined);
  if (named !== undefined) return `${named.label}.wrapUp`;
  const at = external.findIndex((b) => b.endings?.wrapUp !== undefined);
  return at === -1 ? undefined : `${external[at]!.label ?? `externalBudgets[${at}].endings`}.wrapUp`;
}
