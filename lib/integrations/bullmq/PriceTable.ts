import { InvalidArgumentError, type Pricing } from 'agent-state-machine';
import { currentTokenPrices, priceOfTokens, tokenPricesProblem, type TokenPrices } from '../../internal/tokenPrices';
import { undatedModelId } from '../../internal/undatedModelId';

/**
 * Prices per model, as data so that it travels with the batch to every worker (a function
 * cannot), in the shape of `createPricing({ prices })`: US dollars per million tokens
 * (`inputPerMTok`, `outputPerMTok`, the cache rates) and per server tool use. A dated id not
 * listed (`gpt-4.1-2025-04-14`) is priced as its base id (`gpt-4.1`) when that is listed; `'*'`
 * prices any model not listed either way. A response whose model has no price and reports no
 * cost is charged at its hold (its worst case).
 */
export type PriceTable = Record<string, TokenPrices>;

export function assertPriceTable(table: unknown): asserts table is PriceTable | undefined {
  if (table === undefined) return;
  if (typeof table !== 'object' || table === null || Array.isArray(table))
    throw new InvalidArgumentError('pricing', 'an object { [model]: { inputPerMTok, outputPerMTok, … } }', table);
  for (const [model, price] of Object.entries(table)) {
    if (typeof price !== 'object' || price === null || Array.isArray(price))
      throw new InvalidArgumentError(
        `pricing[${JSON.stringify(model)}]`,
        "an object { inputPerMTok, outputPerMTok, … } (createPricing's TokenPrices)",
        price,
      );
    const problem = tokenPricesProblem(price as Record<string, unknown>);
    if (problem !== undefined)
      throw new InvalidArgumentError(
        `pricing[${JSON.stringify(model)}].${problem.key}`,
        problem.expected,
        problem.value,
      );
  }
}

/** The adapter's `pricing` function for a table (one kept by a producer before the rename of its keys too). */
export function pricingFromTable(table: PriceTable): Pricing {
  return (usage, { model }) => {
    const own = (id: string | undefined) => (id !== undefined && Object.hasOwn(table, id) ? table[id] : undefined);
    const price = own(model) ?? own(model === undefined ? undefined : undatedModelId(model)) ?? own('*');
    const { inputTokens, outputTokens } = usage;
    // A count the response did not report is unknown, never zero: the call is charged at its hold.
    if (price === undefined || inputTokens === undefined || outputTokens === undefined) return undefined;
    return priceOfTokens(usage, inputTokens, outputTokens, currentTokenPrices(price));
  };
}
