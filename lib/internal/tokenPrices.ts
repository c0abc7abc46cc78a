// One shape of price per model for every path: `createPricing({ prices })` in process, and the
// price table a distributed batch carries to its workers as data (`submitBatch({ pricing })`).

/** Prices of one model in US dollars per million tokens. Cached and cache-write input default to the input price. */
export interface TokenPrices {
  inputPerMTok: number;
  outputPerMTok: number;
  /** Input read from the prompt cache. Default: `inputPerMTok`. */
  cachedInputPerMTok?: number;
  /** Input written to the prompt cache. Default: `inputPerMTok`. */
  cacheWritePerMTok?: number;
  /** US dollars per web search a server tool made (`Usage.serverToolUses.webSearch`). Unset, a response that searched has no price. */
  webSearchPerUse?: number;
  /** US dollars per page a server tool fetched (`serverToolUses.webFetch`). Unset, a response that fetched has no price. */
  webFetchPerUse?: number;
  /** US dollars per code run of a server tool (`serverToolUses.codeExecution`). Unset, a response that ran code has no price. */
  codeExecutionPerUse?: number;
}

/** The usage a price reads (the agent's `Usage`, as this room may not import it). */
interface PricedUsage {
  cachedInputTokens?: number;
  cacheWriteTokens?: number;
  serverToolUses?: { webSearch?: number; webFetch?: number; codeExecution?: number };
}

const PRICE_KEYS = [
  'inputPerMTok',
  'outputPerMTok',
  'cachedInputPerMTok',
  'cacheWritePerMTok',
  'webSearchPerUse',
  'webFetchPerUse',
  'codeExecutionPerUse',
] as const;

/** Keys of an earlier price shape, each with the key that replaced it. */
const RENAMED: Readonly<Record<string, string>> = {
  inputUsdPerMTok: 'inputPerMTok',
  outputUsdPerMTok: 'outputPerMTok',
};

/** Each kind of server tool use, and the fee of `TokenPrices` that prices it. */
export const FEES = [
  ['webSearch', 'webSearchPerUse'],
  ['webFetch', 'webFetchPerUse'],
  ['codeExecution', 'codeExecutionPerUse'],
] as const;

/** What is wrong with one model's prices: the key, what it should be, and what it is. */
export interface PriceProblem {
  key: string;
  expected: string;
  value: unknown;
}

/** The first problem with `price` as `TokenPrices`, or undefined. A key of the earlier shape is named with its new name. */
export function tokenPricesProblem(price: Record<string, unknown>): PriceProblem | undefined {
  for (const [old, now] of Object.entries(RENAMED))
    if (price[old] !== undefined)
      return {
        key: old,
        expected: `left out: prices take \`${now}\` now (one shape with createPricing's)`,
        value: price[old],
      };
  for (const key of PRICE_KEYS) {
    const value = price[key];
    const required = key === 'inputPerMTok' || key === 'outputPerMTok';
    if ((required || value !== undefined) && !(typeof value === 'number' && Number.isFinite(value) && value >= 0))
      return {
        key,
        expected: `a non-negative number of dollars per ${key.endsWith('PerUse') ? 'use' : 'million tokens'}${required ? '' : ' or undefined'}`,
        value,
      };
  }
  return undefined;
}

/**
 * `price` in the earlier shape (`inputUsdPerMTok`, `outputUsdPerMTok`) in this one, as a batch
 * submitted before the rename keeps it in Redis; prices in this shape as they are.
 */
export function currentTokenPrices(price: TokenPrices | Record<string, number>): TokenPrices {
  const p = price as Record<string, number>;
  if (p.inputPerMTok !== undefined || p.inputUsdPerMTok === undefined) return price as TokenPrices;
  return { inputPerMTok: p.inputUsdPerMTok, outputPerMTok: p.outputUsdPerMTok! };
}

/**
 * What a response cost at `price`, from its counts: undefined when it used a server tool whose
 * fee `price` lacks (never read as free).
 */
export function priceOfTokens(
  usage: PricedUsage,
  inputTokens: number,
  outputTokens: number,
  price: TokenPrices,
): number | undefined {
  const cached = usage.cachedInputTokens ?? 0;
  const written = usage.cacheWriteTokens ?? 0;
  const uncached = Math.max(0, inputTokens - cached - written);
  const dollars =
    uncached * price.inputPerMTok +
    cached * (price.cachedInputPerMTok ?? price.inputPerMTok) +
    written * (price.cacheWritePerMTok ?? price.inputPerMTok) +
    outputTokens * price.outputPerMTok;
  let fees = 0;
  for (const [kind, key] of FEES) {
    const n = usage.serverToolUses?.[kind];
    if (!n) continue;
    const fee = price[key];
    if (fee === undefined) return undefined;
    fees += n * fee;
  }
  return dollars / 1_000_000 + fees;
}
