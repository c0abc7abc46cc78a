import { meterFetch } from 'agent-state-machine';
import { messagesWire } from './messagesWire';

/**
 * The `fetch` to give an Anthropic client (`new Anthropic({ fetch: meteredFetch })`) whose loop
 * runs in `observeLoop` or `observeTask`: every Messages request it makes there, the client's own
 * retries included, is gated, bounded from its body, charged from its answer (iterations and
 * server tool uses counted) and journaled. Elsewhere it is the global `fetch`.
 * `meterFetch([messagesWire], base)` makes one on another `fetch`.
 */
export const meteredFetch = meterFetch([messagesWire], (input, init) => globalThis.fetch(input, init));
