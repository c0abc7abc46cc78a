import { calcPrice } from '@pydantic/genai-prices';
import { InvalidArgumentError, type Pricing, type Usage } from 'agent-state-machine';
import { priceOfTokens, tokenPricesProblem, type TokenPrices } from '../../internal/tokenPrices';
import { undatedModelId } from '../../internal/undatedModelId';

export type { TokenPrices };

/** Options of `createPricing(options)`: your own prices per model, and how to look the rest up. */
export interface PricingOptions {
  /**
   * Your prices by model id. They win over the price data: a fine-tune, a self-hosted model, a
   * negotiated rate. A `Pricing` function for anything else. A dated id the record lacks
   * (`gpt-4.1-2025-04-14`, `…-20250414`) is priced as its base id (`gpt-4.1`) when that is here.
   */
  prices?: Record<string, TokenPrices | Pricing>;
  /** Look models up in the price data bundled with `@pydantic/genai-prices` (offline). Default true. */
  catalog?: boolean;
  /**
   * The provider as the price data names it (`openai`, `anthropic`, `google`, `groq`, `openrouter`, …),
   * for a model id that alone does not say who serves it. Default: found from the model id.
   */
  providerId?: string;
}

/**
 * A `pricing` function for `AgentWithStateMachine` and `runBatch`: what a response cost, from
 * its tokens and model. Your `prices` first, then the price data of `@pydantic/genai-prices`
 * (bundled in the package: nothing is fetched at run time; update the package for new prices),
 * which knows cached-input and cache-write rates, tiered and dated prices, and the fee of a web
 * search (`Usage.serverToolUses`). A model neither knows, or a server tool use without a fee,
 * gives `undefined`, never a guess, so the adapter's unknown-cost rule applies.
 */
export function createPricing(options: PricingOptions = {}): Pricing {
  if (typeof options !== 'object' || options === null)
    throw new InvalidArgumentError('options', 'an object { prices?, catalog?, providerId? }', options);
  const { prices = {}, catalog = true, providerId } = options;
  if (typeof prices !== 'object' || prices === null || Array.isArray(prices))
    throw new InvalidArgumentError('options.prices', 'a record { [model id]: TokenPrices | Pricing }', prices);
  for (const [model, price] of Object.entries(prices)) {
    if (typeof price === 'function') continue;
    if (typeof price !== 'object' || price === null)
      throw new InvalidArgumentError(
        `options.prices["${model}"]`,
        'TokenPrices { inputPerMTok, outputPerMTok, … } or a Pricing function',
        price,
      );
    const problem = tokenPricesProblem(price as unknown as Record<string, unknown>);
    if (problem !== undefined)
      throw new InvalidArgumentError(`options.prices["${model}"].${problem.key}`, problem.expected, problem.value);
  }
  if (typeof catalog !== 'boolean') throw new InvalidArgumentError('options.catalog', 'a boolean', catalog);
  if (providerId !== undefined && (typeof providerId !== 'string' || providerId === ''))
    throw new InvalidArgumentError('options.providerId', 'a non-empty string or undefined', providerId);
  const own = new Map(Object.entries(prices));

  return (usage: Usage, { model }: { model: string | undefined }): number | undefined => {
    if (model === undefined) return undefined;
    // A count the response did not report is unknown, never zero: no price, so the call is charged at its hold.
    const { inputTokens, outputTokens } = usage;
    if (inputTokens === undefined || outputTokens === undefined) return undefined;
    // The exact id first, then the base id of a dated snapshot.
    const base = own.has(model) ? undefined : undatedModelId(model);
    const price = own.get(model) ?? (base === undefined ? undefined : own.get(base));
    if (typeof price === 'function') return price(usage, { model });
    if (price !== undefined) return priceOfTokens(usage, inputTokens, outputTokens, price);
    if (!catalog) return undefined;
    const uses = usage.serverToolUses;
    // The price data has no per-use price for code runs (billed by container time): no price, not $0.
    if (uses?.codeExecution) return undefined;
    try {
      const result = calcPrice(
        {
          input_tokens: inputTokens,
          output_tokens: outputTokens,
          ...(usage.cachedInputTokens ? { cache_read_tokens: usage.cachedInputTokens } : {}),
          ...(usage.cacheWriteTokens ? { cache_write_tokens: usage.cacheWriteTokens } : {}),
          ...(uses?.webSearch ? { web_searches: uses.webSearch } : {}),
        },
        model,
        providerId !== undefined ? { providerId } : {},
      );
      if (result === null) return undefined;
      // A search the price data has no fee for is unpriced, not free.
      if (uses?.webSearch && typeof result.model_price.web_searches_kcount !== 'number') return undefined;
      // Fetches: Anthropic bills the fetched content's tokens only (its web fetch tool docs); elsewhere unpriced.
      if (uses?.webFetch && result.provider.id !== 'anthropic') return undefined;
      return result.total_price;
    } catch {
      // Figures the price data cannot use (cache tokens above the input tokens): no price, not a guess.
      return undefined;
    }
  };
}
