import type { LLMCallBound, LLMResponse } from '../agent/AgentLoop';

/**
 * One provider API as it looks on the wire: which requests are its model calls, the bound of a
 * request read from the body the SDK sends, and the response read from the body the provider
 * sends back. `meterFetch` gates, charges and serves each HTTP request by it, retries included.
 * The provider integrations define them (`agent-state-machine/openai`, `/anthropic`).
 */
export interface WireFormat {
  /** Names the API in errors and records: `OpenAI Chat Completions`. */
  readonly name: string;
  /** Whether a POST to `url` is one of this API's model calls. */
  matches(url: URL): boolean;
  /**
   * The request's bound from its JSON body (its input tokens, its max output tokens, the model,
   * server tool uses), or why it has none: a strict cap then refuses the call with that reason.
   */
  bound(body: Record<string, unknown>): LLMCallBound | string;
  /** The response, from the JSON body of a 2xx answer: its text, tool calls, usage, model and finish reason. */
  read(json: unknown): LLMResponse;
  /** The JSON body that answers a request with a recorded response (a resumed run), as the provider would have. */
  serve(response: LLMResponse, body: Record<string, unknown>): unknown;
}
