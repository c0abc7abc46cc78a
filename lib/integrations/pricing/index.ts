/**
 * A `pricing` function from maintained, bundled price data.
 *
 * @module agent-state-machine/pricing
 */
export { createPricing } from './createPricing';
export type { PricingOptions, TokenPrices } from './createPricing';
