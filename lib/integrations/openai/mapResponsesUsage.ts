import type { ResponseUsage } from 'openai/resources/responses/responses';
import type { Usage } from 'agent-state-machine';

/**
 * Every figure a Responses API usage reports, in the library's terms (`inputTokens` includes
 * the cached ones, as `input_tokens` does; `outputTokens` the reasoning ones), with the cost a
 * gateway such as OpenRouter reports in `usage.cost`, and the web searches the server ran (the
 * `web_search_call` items of `items`, its output) as `serverToolUses.webSearch`.
 */
export function mapResponsesUsage(
  usage: ResponseUsage | null | undefined,
  items?: readonly { type: string }[],
): Usage | undefined {
  if (usage === undefined || usage === null) return undefined;
  // Web searches the server ran, billed per call: its `web_search_call` output items.
  const searches = items?.filter((item) => item.type === 'web_search_call').length ?? 0;
  const input = usage.input_tokens_details as
    { cached_tokens?: number; cache_write_tokens?: number } | null | undefined;
  const output = usage.output_tokens_details as { reasoning_tokens?: number } | null | undefined;
  const cost = (usage as { cost?: unknown }).cost;
  return {
    inputTokens: usage.input_tokens,
    outputTokens: usage.output_tokens,
    cachedInputTokens: input?.cached_tokens,
    cacheWriteTokens: input?.cache_write_tokens,
    reasoningTokens: output?.reasoning_tokens,
    ...(typeof cost === 'number' && Number.isFinite(cost) ? { costUsd: cost } : {}),
    ...(searches > 0 ? { serverToolUses: { webSearch: searches } } : {}),
  };
}
