import { InvalidArgumentError, type Pricing } from 'agent-state-machine';
import { undatedModelId } from '../../internal/undatedModelId';

/**
 * Prices per model in US dollars per million tokens, as data so that it travels with the batch
 * to every worker (a function cannot). A dated id not listed (`gpt-4.1-2025-04-14`) is priced as
 * its base id (`gpt-4.1`) when that is listed; `'*'` prices any model not listed either way. A
 * response whose model has no price and reports no cost is charged at its hold (its worst case).
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
    const own = (id: string | undefined) => (id !== undefined && Object.hasOwn(table, id) ? table[id] : undefined);
    const price = own(model) ?? own(model === undefined ? undefined : undatedModelId(model)) ?? own('*');
    const { inputTokens, outputTokens } = usage;
    // A count the response did not report is unknown, never zero: the call is charged at its hold.
    if (price === undefined || inputTokens === undefined || outputTokens === undefined) return undefined;
    return (inputTokens * price.inputUsdPerMTok + outputTokens * price.outputUsdPerMTok) / 1e6;
  };
}
