import type { LanguageModelUsage } from 'ai';
import type { Usage } from 'agent-state-machine';

/**
 * The AI SDK's usage of one step, as the adapter counts it. The SDK's `inputTokens` is the total
 * (cache reads and writes included) and `outputTokens` includes reasoning, which is what `Usage`
 * means too; the details come from the SDK's `inputTokenDetails` / `outputTokenDetails`, or the
 * older flat fields when a provider fills only those. Missing figures stay `undefined`.
 */
export function usageFromAISDK(usage: LanguageModelUsage | undefined): Usage {
  if (usage === undefined || usage === null) return {};
  return {
    inputTokens: usage.inputTokens,
    outputTokens: usage.outputTokens,
    cachedInputTokens: usage.inputTokenDetails?.cacheReadTokens ?? usage.cachedInputTokens,
    cacheWriteTokens: usage.inputTokenDetails?.cacheWriteTokens,
    reasoningTokens: usage.outputTokenDetails?.reasoningTokens ?? usage.reasoningTokens,
  };
}
