import { meterFetch } from 'agent-state-machine';
import { chatWire } from './chatWire';
import { responsesWire } from './responsesWire';

/**
 * The `fetch` to give an `openai` client (`new OpenAI({ fetch: meteredFetch })`) whose loop runs
 * in `observeLoop` or `observeTask`: every Chat Completions and Responses request it makes there,
 * the client's own retries included, is gated, bounded from its body, charged from its answer
 * and journaled. Elsewhere it is the global `fetch`. `meterFetch([chatWire, responsesWire], base)`
 * makes one on another `fetch`.
 */
export const meteredFetch = meterFetch([chatWire, responsesWire], (input, init) => globalThis.fetch(input, init));
