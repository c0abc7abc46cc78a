import { InvalidArgumentError } from '../machine/InvalidArgumentError';

/**
 * A strict dollar cap (the default for `maxCostUsd`) was given to a loop whose calls cannot be
 * bounded: each call's worst case must be held before it starts, so nothing runs. It names the
 * cap, the setting that would bound the calls, and `strict: false`, which accepts an overshoot
 * of at most one LLM response per run in flight instead:
 * ``budget.maxCostUsd is a strict cap (caps are strict by default), so each LLM call's worst
 * case is held before it starts, but fromOpenAIChat sets no max output tokens: give `maxTokens`
 * on the loop, or set `strict: false` beside `maxCostUsd` …``
 */
export class UnboundedCallsError extends InvalidArgumentError {
  constructor(
    /** The strict cap, as the caller wrote it (`budget.maxCostUsd`, `perRun.maxCostUsd`, `total.maxCostUsd`). */
    readonly cap: string,
    /** The setting that would bound each call (`agent.llmCallBound`, `options.maxTokens`). */
    readonly setting: string,
    /** How to give it, in words (`` `maxTokens` on the loop ``). */
    readonly remedy: string,
    /** Why the calls have no bound. */
    readonly why: string,
    value: unknown,
  ) {
    super(setting, `set, since ${cap} is a strict cap`, value);
    this.message = unboundedCallsMessage(cap, remedy, why);
  }
}

/** How to accept a cap that may be passed instead, as the refusals of a strict cap say it. */
export const STRICT_FALSE =
  'or set `strict: false` beside `maxCostUsd` to accept an overshoot of at most one LLM response per run in flight';

/** The words of `UnboundedCallsError`, also said when a run fails at its first call for the same reason. */
export function unboundedCallsMessage(cap: string, remedy: string, why: string): string {
  return `${cap} is a strict cap (caps are strict by default), so each LLM call's worst case is held before it starts, but ${why}: give ${remedy}, ${STRICT_FALSE}`;
}
