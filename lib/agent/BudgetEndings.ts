import { InvalidArgumentError } from '../machine/InvalidArgumentError';

/**
 * `budget.wrapUp`: end with the model's answer within the dollar cap. `true` for the defaults;
 * `finalCallUsd` replaces the computed worst case of the final call; `instruction` replaces the
 * message that asks for the final answer.
 */
export type WrapUpOption = true | { finalCallUsd?: number | undefined; instruction?: string | undefined };

/** The keys of a budget that shape how a run ends rather than cap it: `wrapUp`, `visible`. */
export interface BudgetEndings {
  /**
   * Keeps the worst case of one final call (no tools, `instruction` added) held for the whole
   * turn: when the next ordinary call would not fit beside it, the run moves to WrappingUp, makes
   * that final call and ends with the model's answer (outcome `wrapped_up`). Needs `maxCostUsd`,
   * a loop that honours `ctx.wrapUp` (the ready-made loops do), and `pricing` (or `finalCallUsd`);
   * brings `WRAP_UP_EXTENSION`'s state (a `table` of your own needs it).
   */
  wrapUp?: WrapUpOption | undefined;
  /**
   * Each LLM call carries a short note of what is left (calls, tokens, dollars, time), so that
   * the model can plan; its tokens count in the call's bound. Needs a loop that honours
   * `ctx.budgetNote` (the ready-made loops do). Default off.
   */
  visible?: boolean | undefined;
}

/** The message that asks for the final answer when `wrapUp.instruction` is not given. */
export const DEFAULT_WRAP_UP_INSTRUCTION =
  'The budget for this task is nearly spent: no more tools can be called. Give your final answer now, with what you have found so far and what is left undone.';

/** `wrapUp` and `visible` as a turn uses them. */
export interface ResolvedEndings {
  wrapUp: { instruction: string; finalCallUsd: number | undefined } | undefined;
  visible: boolean;
}

/** Whether `key` is one of the ending keys of a budget (checked by `assertBudgetEnding`). */
export function isEndingKey(key: string): key is keyof BudgetEndings {
  return key === 'wrapUp' || key === 'visible';
}

/**
 * Checks `wrapUp` or `visible` of limits named `name` (`budget`, `perRun`, `total`): their
 * shapes, and that `wrapUp` has a `maxCostUsd` beside it whose cap its `finalCallUsd` fits in.
 */
export function assertBudgetEnding(limits: Record<string, unknown>, key: keyof BudgetEndings, name: string): void {
  const value = limits[key];
  if (value === undefined) return;
  if (key === 'visible') {
    if (typeof value !== 'boolean')
      throw new InvalidArgumentError(`${name}.visible`, 'true, false or undefined', value);
    return;
  }
  if (value !== true && (typeof value !== 'object' || value === null || Array.isArray(value)))
    throw new InvalidArgumentError(`${name}.wrapUp`, 'true or an object { finalCallUsd?, instruction? }', value);
  const max = limits['maxCostUsd'];
  if (typeof max !== 'number')
    throw new InvalidArgumentError(
      `${name}.wrapUp`,
      'left out unless `maxCostUsd` is set beside it (the final call is held within a dollar cap)',
      value,
    );
  if (value === true) return;
  for (const k of Object.keys(value))
    if (k !== 'finalCallUsd' && k !== 'instruction')
      throw new InvalidArgumentError(
        `${name}.wrapUp.${k}`,
        k === 'reserveUsd'
          ? 'left out: `reserveUsd` is now `finalCallUsd`'
          : 'finalCallUsd or instruction (unknown key)',
        (value as Record<string, unknown>)[k],
      );
  const { finalCallUsd, instruction } = value as { finalCallUsd?: unknown; instruction?: unknown };
  if (
    finalCallUsd !== undefined &&
    !(typeof finalCallUsd === 'number' && Number.isFinite(finalCallUsd) && finalCallUsd >= 0)
  )
    throw new InvalidArgumentError(`${name}.wrapUp.finalCallUsd`, 'a non-negative finite number of USD', finalCallUsd);
  if (typeof finalCallUsd === 'number' && finalCallUsd > max)
    throw new InvalidArgumentError(
      `${name}.wrapUp.finalCallUsd`,
      `at most \`${name}.maxCostUsd\` (${max}): the final call could never be held within the cap`,
      finalCallUsd,
    );
  if (instruction !== undefined && !(typeof instruction === 'string' && instruction.trim() !== ''))
    throw new InvalidArgumentError(`${name}.wrapUp.instruction`, 'a non-empty string', instruction);
}

/** Pure: the endings a turn's budgets ask for, the first budget's that sets each winning. */
export function resolveEndings(
  limits: readonly { wrapUp?: WrapUpOption | undefined; visible?: boolean | undefined }[],
): ResolvedEndings {
  let wrapUp: ResolvedEndings['wrapUp'];
  let visible = false;
  for (const l of limits) {
    if (wrapUp === undefined && l.wrapUp !== undefined) {
      const o = l.wrapUp === true ? {} : l.wrapUp;
      wrapUp = { instruction: o.instruction ?? DEFAULT_WRAP_UP_INSTRUCTION, finalCallUsd: o.finalCallUsd };
    }
    if (l.visible === true) visible = true;
  }
  return { wrapUp, visible };
}
