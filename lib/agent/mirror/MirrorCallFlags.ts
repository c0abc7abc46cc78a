import type { LLMCallBound } from '../AgentLoop';

/**
 * What a mirrored model call must carry, as `StepMirror.modelCallPlan` answers it: `budgetNote`
 * (add it to the request, `budget.visible`), `wrapUp` (this is the final call: send it with no
 * tool to call, this instruction added last), `withheld` (the results of the tool calls sent
 * with this final call would not fit in the cap: send this text as each one's error result
 * instead), `withoutLastRound` (not even that fits: leave the last round out).
 */
export interface MirrorCallFlags {
  budgetNote?: string;
  wrapUp?: string;
  withheld?: string;
  /**
   * With `wrapUp`, when even with its results withheld the final call would outgrow the hold kept
   * for it: send it without the model's last round — the prompt cut before its last assistant
   * message (that response and the results of its tool calls left out), the flags then added.
   */
  withoutLastRound?: true;
}

/** The bound of a model call as it would be sent with `flags`, or why it has none. */
export type MirrorBoundOf = (flags: MirrorCallFlags) => LLMCallBound | string;
