import { InvalidArgumentError, type Pricing } from 'agent-state-machine';

/**
 * Prices per model in US dollars per million tokens, as data so that it travels with the batch
 * to every worker (a function cannot). `'*'` prices any model not listed. A response whose
 * model has no price and reports no cost is charged tokens only.
 */
export type PriceTable = Record<string, { inputUsdPerMTok: number; outputUsdPerMTok: number }>;

export function assertPriceTable(table: unknown): asserts table is PriceTable | undefined {
  if (table === undefined) return;
  if (typeof table !== 'object' || table === null || Array.isArray(table))
    throw new InvalidArgumentError('pricing', 'an object { [model]: { inputUsdPerMTok, outputUsdPerMTok } }', table);
  for (const [model, price] of Object.entries(table)) {
    for (const key of ['inputUsdPerMTok', 'outputUsdPerMTok'] as const) {
      const value = (price as Record<string, unknown> | null)?.[key];
      if (!(typeof value === 'number' && Number.isFinite(value) && value >= 0))
        throw new InvalidArgumentError(
          `pricing[${JSON.stringify(model)}].${key}`,
          'a non-negative finite number',
          value,
        );
    }
  }
}

/** The adapter's `pricing` function for a table. */
export function pricingFromTable(table: PriceTable): Pricing {
  return (usage, { model }) => {
    const price = (model !== undefined ? table[model] : undefined) ?? table['*'];
    if (price === undefined) return undefined;
    return (
      ((usage.inputTokens ?? 0) * price.inputUsdPerMTok + (usage.outputTokens ?? 0) * price.outputUsdPerMTok) / 1e6
    );
  };
}
