import { unboundedWhy } from '../internal/unboundedLoop';
import type { AgentLoop } from './AgentLoop';
import { UnboundedCallsError } from './UnboundedCallsError';

/**
 * A strict cap holds each call's worst case, which only the loop can bound: refuses, before
 * anything runs, a loop without `llmCallBound` and a ready-made loop whose requests ask for no
 * max output tokens. `cap` names the strict cap as the caller wrote it (`budget.maxCostUsd`),
 * `name` the loop (`tasks[2].agent`).
 */
export function assertBoundsCalls(agent: AgentLoop, cap: string, name = 'agent'): void {
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
}
