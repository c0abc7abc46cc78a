import type { LanguageModelUsage } from 'ai';
import type { Usage } from 'agent-state-machine';

/** The flat detail fields AI SDK 6 still fills beside `inputTokenDetails`/`outputTokenDetails`; AI SDK 7 dropped them. */
type WithFlatDetails = LanguageModelUsage & {
  cachedInputTokens?: number | undefined;
  reasoningTokens?: number | undefined;
};

/**
 * The AI SDK's usage of one step, as the adapter counts it. The SDK's `inputTokens` is the total
 * (cache reads and writes included) and `outputTokens` includes reasoning, which is what `Usage`
 * means too; the details come from the SDK's `inputTokenDetails` / `outputTokenDetails` (the only
 * place AI SDK 7 has them), or AI SDK 6's older flat fields when a provider fills only those.
 * Missing figures stay `undefined`. Pass one step's usage (`step.usage`): in AI SDK 7 a result's
 * `usage` is the sum over all its steps (6 called that `totalUsage`).
 */
export function usageFromAISDK(usage: LanguageModelUsage | undefined): Usage {
  if (usage === undefined || usage === null) return {};
  const flat = usage as WithFlatDetails;
  return {
    inputTokens: usage.inputTokens,
    outputTokens: usage.outputTokens,
    cachedInputTokens: usage.inputTokenDetails?.cacheReadTokens ?? flat.cachedInputTokens,
    cacheWriteTokens: usage.inputTokenDetails?.cacheWriteTokens,
    reasoningTokens: usage.outputTokenDetails?.reasoningTokens ?? flat.reasoningTokens,
  };
}
