import { unboundedWhy } from '../../internal/unboundedLoop';
import type { AgentLoop } from '../AgentLoop';
import { UnboundedCallsError } from '../UnboundedCallsError';

/**
 * A strict cap holds each call's worst case, which only the loop can bound: refuses, before
 * anything runs, a loop without `llmCallBound` and a ready-made loop whose requests ask for no
 * max output tokens; with `compact` (the option is on), a loop that does not say what LLM calls
 * its compact makes (`compactCalls`). `cap` names the strict cap as the caller wrote it
 * (`budget.maxCostUsd`), `name` the loop (`tasks[2].agent`).
 */
export function assertBoundsCalls(agent: AgentLoop, cap: string, name = 'agent', compact = false): void {
  if (typeof agent.llmCallBound !== 'function')
    throw new UnboundedCallsError(
      cap,
      `${name}.llmCallBound`,
      '`llmCallBound` on the loop (a function (call, ctx) => { inputTokens, maxOutputTokens, model? } bounding each request; the ready-made loops have one)',
      'this loop has no llmCallBound',
      agent.llmCallBound,
    );
  const unbounded = unboundedWhy(agent);
  if (unbounded !== undefined)
    throw new UnboundedCallsError(cap, unbounded.setting, unbounded.remedy, unbounded.why, undefined);
  // A compaction may summarise with an LLM: the cap holds it only when it goes through ctx.llm.
  if (compact && agent.compactCalls === undefined)
    throw new UnboundedCallsError(
      cap,
      `${name}.compactCalls`,
      "`compactCalls` on the loop: 'none' when its compact makes no LLM call, 'budgeted' when it makes them through ctx.llm",
      "the `compact` option is on and the loop's compact may call an LLM the cap does not hold",
      undefined,
    );
}
