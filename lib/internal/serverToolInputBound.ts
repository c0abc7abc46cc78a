/** What the server tools a request declares may add to it (its `uses` is the library's `ServerToolUses`). */
export interface ServerToolPlan {
  /** The most uses of each kind: Anthropic's `max_uses` per tool, OpenAI's `max_tool_calls` per response. */
  uses: { webSearch?: number | undefined; webFetch?: number | undefined; codeExecution?: number | undefined };
  /** The most input tokens one use's results may add. */
  resultTokens: number;
}

/**
 * Pure: the input-token bound of a request that may use server tools as `plan` says, from the
 * bound of the request as sent (`inputTokens`) and its max output tokens. The server samples
 * once more after each use, and each pass reads the request, what was written so far (at most
 * the max output tokens) and every result so far: with U uses, U + 1 passes of at most
 * `inputTokens + maxOutputTokens`, and results that add up to `resultTokens × U(U+1)/2`.
 */
export function serverToolInputBound(inputTokens: number, maxOutputTokens: number, plan: ServerToolPlan): number {
  const n = (plan.uses.webSearch ?? 0) + (plan.uses.webFetch ?? 0);
  return (n + 1) * (inputTokens + maxOutputTokens) + (plan.resultTokens * n * (n + 1)) / 2;
}
