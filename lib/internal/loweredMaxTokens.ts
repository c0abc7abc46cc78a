/** The max output tokens a ready-made loop asks for: its configured one, lowered to `ctx.maxOutputTokens` when that is set. */
export function loweredMaxTokens(configured: number | undefined, cap: number | undefined): number | undefined {
  if (cap === undefined) return configured;
  return configured === undefined ? cap : Math.min(configured, cap);
}

/** The error a ready-made loop's `llmCallBound` throws when its requests ask for no max output tokens. */
export function noMaxTokensMessage(loop: string): string {
  return `${loop} sets no max output tokens, so a call's output (and its cost) has no bound: set options.maxTokens (a strict maxCostUsd needs it)`;
}
