// agent-state-machine/pricing: a `pricing` function from maintained, bundled price data.
export { createPricing } from './createPricing';
export type { PricingOptions, TokenPrices } from './createPricing';
