import type { LLMCallBound } from './AgentLoop';

/**
 * What a mirrored model call must carry, as `StepMirror.modelCallPlan` answers it: `budgetNote`
 * (add it to the request, `budget.visible`), `wrapUp` (this is the final call: send it with no
 * tool to call, this instruction added last), `withheld` (the results of the tool calls sent
 * with this final call would not fit in the cap: send this text as each one's error result instead).
 */
export interface MirrorCallFlags {
  budgetNote?: string;
  wrapUp?: string;
  withheld?: string;
}

/** The bound of a model call as it would be sent with `flags`, or why it has none. */
export type MirrorBoundOf = (flags: MirrorCallFlags) => LLMCallBound | string;
