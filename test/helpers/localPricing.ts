import type { Pricing } from 'agent-state-machine';

/** $5 per million tokens, in or out, for the model `gpt-local`. */
export const USD_PER_TOKEN = 5e-6;

/**
 * Prices `gpt-local`; knows no other id (a dated one included), and throws for
 * `gpt-local-throws`, which only a response names (a request's bound names `gpt-local`): pricing
 * that throws on real usage alone.
 */
export const localPricing: Pricing = (u, { model }) => {
  if (model === 'gpt-local-throws') throw new Error('no price sheet for gpt-local-throws');
  return model === 'gpt-local' ? ((u.inputTokens ?? 0) + (u.outputTokens ?? 0)) * USD_PER_TOKEN : undefined;
};
