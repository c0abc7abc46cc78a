import type { LLMCallBound, LLMResponse } from '../agent/AgentLoop';
import type { OutputBoundWatch } from '../agent/money/cutAtBound';

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
  /** Streamed answers (`stream: true`); without it, a streamed request is refused by name. */
  readonly stream?: WireStream;
  /** The JSON body that answers a request with a recorded response (a resumed run), as the provider would have. */
  serve(response: LLMResponse, body: Record<string, unknown>): unknown;
}

/** How one API streams its answers, for `meterFetch`. */
export interface WireStream {
  /**
   * Folds the JSON events of a streamed answer into the JSON body `WireFormat.read` takes,
   * feeding every output delta to `watch` (which cuts the request at its max output tokens); a
   * stream that ends before the model finished is an error.
   */
  collect(events: AsyncIterable<unknown>, watch: OutputBoundWatch): Promise<unknown>;
  /**
   * The same fold, one event at a time with no await between them: where given, `meterFetch`
   * reads the answer with it, not with `collect` (the `meter` bench's target: no promise per event).
   */
  fold?(watch: OutputBoundWatch): StreamFold;
  /** The events, in order, that answer a streamed request with a recorded response; a string is sent as the data as it is (`[DONE]`). */
  serve(response: LLMResponse, body: Record<string, unknown>): readonly unknown[];
}

/** A streamed answer folded as its events arrive (`WireStream.fold`). */
export interface StreamFold {
  /** Takes the next event's JSON; throws to end the fold in error (cut at the bound, an error event). */
  event(json: unknown): void;
  /** The stream ended: the JSON body `WireFormat.read` takes; throws when the model had not finished (dropped). */
  end(): unknown;
  /**
   * Whether every part of the answer and its final usage came through the stream then broke (a
   * Chat Completions stream cut before `[DONE]`): such a stream ends whole, billed at that usage.
   */
  readonly whole?: boolean;
}
