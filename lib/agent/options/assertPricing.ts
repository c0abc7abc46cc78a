import { InvalidArgumentError } from '../../machine/InvalidArgumentError';

/** What every path that takes a `pricing` function expects, in one wording. */
export const PRICING_EXPECTED =
  "a function (usage, { model }) => USD or undefined: createPricing() from 'agent-state-machine/pricing', or your own";

/** Refuses a `pricing` that is not a function, naming it, on the adapter, the mirrors, batches and workers alike. */
export function assertPricing(pricing: unknown): void {
  if (pricing !== undefined && typeof pricing !== 'function')
    throw new InvalidArgumentError('pricing', PRICING_EXPECTED, pricing);
}
