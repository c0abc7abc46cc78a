import type { LLMCallBound, Pricing, Usage } from '../AgentLoop';
import { FEES } from '../../internal/tokenPrices';

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
  // The bound's server tool uses are in every shape, at their fees.
  const plain: Usage =
    serverToolUses === undefined
      ? { inputTokens, outputTokens: maxOutputTokens }
      : { inputTokens, outputTokens: maxOutputTokens, serverToolUses };
  const prices: number[] = [];
  for (const usage of [
    plain,
    { ...plain, cacheWriteTokens: inputTokens },
    { ...plain, reasoningTokens: maxOutputTokens },
  ]) {
    const priced = priceShape(pricing, usage, model);
    if (typeof priced !== 'number') return priced;
    prices.push(priced);
  }
  const [base, written, reasoned] = prices as [number, number, number];
  // Both at once can be dearer than either only where each alone is dearer than plain
  // (priced once more only then: pricing runs before every call).
  if (written > base && reasoned > base) {
    const both = priceShape(
      pricing,
      { ...plain, cacheWriteTokens: inputTokens, reasoningTokens: maxOutputTokens },
      model,
    );
    if (typeof both !== 'number') return both;
    prices.push(both);
  }
  return { costUsd: Math.max(...prices) };
}

/** One shape of usage priced: its USD, or why the worst case is unknown. */
function priceShape(pricing: Pricing, usage: Usage, model: string | undefined): number | WorstCase {
  let priced: unknown;
  try {
    priced = pricing(usage, { model });
  } catch (error) {
    return { costUsd: undefined, why: `pricing threw for model ${model ?? '(not named)'}: ${String(error)}` };
  }
  if (priced === undefined) return { costUsd: undefined, why: noPriceWhy(pricing, usage, model) };
  if (!(typeof priced === 'number' && Number.isFinite(priced) && priced >= 0))
    return {
      costUsd: undefined,
      why: `pricing returned ${String(priced)} for model ${model ?? '(not named)'}, not a non-negative number of USD`,
    };
  return priced;
}

/** Why `pricing` gave no price: the model's, or only some server tools' fees (priced with each alone, it has none for those). */
function noPriceWhy(pricing: Pricing, usage: Usage, model: string | undefined): string {
  const named = model ?? '(not named by llmCallBound)';
  const priced = (serverToolUses: Usage['serverToolUses']): boolean => {
    try {
      return typeof pricing({ ...usage, serverToolUses }, { model }) === 'number';
    } catch {
      return false;
    }
  };
  if (usage.serverToolUses === undefined || !priced(undefined)) return `pricing has no price for model ${named}`;
  const lacking = FEES.filter(([kind]) => {
    const n = usage.serverToolUses?.[kind];
    return n !== undefined && n > 0 && !priced({ [kind]: n });
  });
  if (lacking.length === 0) return `pricing has no price for model ${named} with its server tool uses`;
  const uses = lacking.map(([kind]) => `${kind}: ${usage.serverToolUses![kind]}`).join(', ');
  const fees = lacking.map(([, fee]) => `\`${fee}\``).join(', ');
  return `pricing has no fee for the server tool uses the request allows (${uses}) on model ${named} (in a createPricing table: ${fees})`;
}
