import type { LLMCallBound, Pricing, Usage } from './AgentLoop';

/** What `worstCaseCost` found: the most the call may cost, or why that is unknown. */
export type WorstCase = { costUsd: number } | { costUsd: undefined; why: string };

/**
 * Pure but for `pricing`: the most one LLM call bounded by `bound` may cost, in USD. The call
 * is priced at its bound (every input token, `maxOutputTokens` output tokens) as the usage
 * could be reported: plain, with all input written to a prompt cache (dearer at some
 * providers), with all output spent on reasoning, and both; the dearest is the worst case. The
 * bound's server tool uses (`serverToolUses`) are in each, priced at their fees. Unknown (never $0) when there is no `pricing`, when it has no price for the model, or
 * when it throws or answers anything but a finite non-negative number.
 */
export function worstCaseCost(bound: LLMCallBound, pricing: Pricing | undefined): WorstCase {
  const model = bound.model;
  if (pricing === undefined) return { costUsd: undefined, why: 'no pricing option is set' };
  const { inputTokens, maxOutputTokens, serverToolUses } = bound;
  // The most server tool uses the request may make, at their fees, in every shape.
  const uses: Usage = serverToolUses === undefined ? {} : { serverToolUses };
  const shapes: Usage[] = [
    { inputTokens, outputTokens: maxOutputTokens, ...uses },
    { inputTokens, outputTokens: maxOutputTokens, cacheWriteTokens: inputTokens, ...uses },
    { inputTokens, outputTokens: maxOutputTokens, reasoningTokens: maxOutputTokens, ...uses },
    // Both at once: dearer than either where cache writes and reasoning both cost more.
    {
      inputTokens,
      outputTokens: maxOutputTokens,
      cacheWriteTokens: inputTokens,
      reasoningTokens: maxOutputTokens,
      ...uses,
    },
  ];
  let worst = 0;
  for (const usage of shapes) {
    let priced: unknown;
    try {
      priced = pricing(usage, { model });
    } catch (error) {
      return { costUsd: undefined, why: `pricing threw for model ${model ?? '(not named)'}: ${String(error)}` };
    }
    if (priced === undefined)
      return { costUsd: undefined, why: `pricing has no price for model ${model ?? '(not named by llmCallBound)'}` };
    if (!(typeof priced === 'number' && Number.isFinite(priced) && priced >= 0))
      return {
        costUsd: undefined,
        why: `pricing returned ${String(priced)} for model ${model ?? '(not named)'}, not a non-negative number of USD`,
      };
    if (priced > worst) worst = priced;
  }
  return { costUsd: worst };
}
