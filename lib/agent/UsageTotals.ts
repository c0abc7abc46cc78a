import type { Usage } from './AgentLoop';

/** Usage summed over calls: what budgets are checked against. */
export interface UsageTotals {
  inputTokens: number;
  outputTokens: number;
  costUsd: number;
  toolCalls: number;
  llmCalls: number;
  /** Time spent inside turns, in milliseconds. */
  wallMs: number;
}

/** An increment of usage: a response's tokens and cost, a tool call, an LLM call, elapsed time. */
export type UsageDelta = Partial<UsageTotals>;

export function emptyUsage(): UsageTotals {
  return { inputTokens: 0, outputTokens: 0, costUsd: 0, toolCalls: 0, llmCalls: 0, wallMs: 0 };
}

/** `a` plus `b`, as a new object. */
export function addUsage(a: UsageTotals, b: UsageDelta): UsageTotals {
  return {
    inputTokens: a.inputTokens + (b.inputTokens ?? 0),
    outputTokens: a.outputTokens + (b.outputTokens ?? 0),
    // Rounded to 1e-10 dollars so sums of cents do not print as 0.21000000000000002.
    costUsd: roundCost(a.costUsd + (b.costUsd ?? 0)),
    toolCalls: a.toolCalls + (b.toolCalls ?? 0),
    llmCalls: a.llmCalls + (b.llmCalls ?? 0),
    wallMs: a.wallMs + (b.wallMs ?? 0),
  };
}

/** Adds `b` to `a` in place, rounding as `addUsage` does. */
export function addUsageTo(a: UsageTotals, b: UsageDelta): void {
  a.inputTokens += b.inputTokens ?? 0;
  a.outputTokens += b.outputTokens ?? 0;
  a.costUsd = roundCost(a.costUsd + (b.costUsd ?? 0));
  a.toolCalls += b.toolCalls ?? 0;
  a.llmCalls += b.llmCalls ?? 0;
  a.wallMs += b.wallMs ?? 0;
}

/** Dollars rounded to 1e-10. */
export function roundCost(usd: number): number {
  return Math.round(usd * 1e10) / 1e10;
}

/** Tokens as budgets count them: input plus output. */
export function totalTokens(usage: UsageTotals): number {
  return usage.inputTokens + usage.outputTokens;
}

/** The delta one LLM response reports. */
export function usageFromResponse(usage: Usage | undefined): UsageDelta {
  return { inputTokens: usage?.inputTokens ?? 0, outputTokens: usage?.outputTokens ?? 0, costUsd: usage?.costUsd ?? 0 };
}
