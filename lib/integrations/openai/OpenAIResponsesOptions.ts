import type { ResponseInputItem } from 'openai/resources/responses/responses';
import type { AgentLoop } from 'agent-state-machine';
import type { SdkTool, StreamTextHandler } from '../../internal/sdkTools';

/** A tool the LLM may call: description, JSON Schema of its input, and what running it does. */
export type OpenAIResponsesTool = SdkTool;

/** Options of `fromOpenAIResponses(client, options)`. */
export interface OpenAIResponsesOptions {
  /** The model id, e.g. `gpt-5-mini`, `o4-mini`, `gpt-4.1-mini`. */
  model: string;
  /** The tools the LLM may call, by name (sent as `function` tools). Read at every request, so changes made to the record in place reach the next one. */
  tools?: Record<string, OpenAIResponsesTool>;
  /** The system prompt, sent as the request's `instructions` with every request (not kept in `items`). */
  system?: string;
  /** A conversation to continue, as Responses input items (a previous loop's `items`). Copied, never modified. */
  items?: ResponseInputItem[];
  /**
   * Sent as `max_output_tokens` (the API's minimum is 16). Reasoning tokens count against it.
   * A strict `maxCostUsd` needs one (it bounds each call's output), and lowers it when little is left.
   */
  maxTokens?: number;
  /** Stream the response (the SDK's event stream); `onText` gets the text as it arrives. */
  stream?: boolean | StreamTextHandler;
  /**
   * Sent as `store`. Left out, the server's default applies (OpenAI: `true`, the response is
   * kept on OpenAI's servers and reasoning items are sent back by id). `false` keeps nothing
   * there (needed for Zero Data Retention organizations): reasoning then travels to the next
   * request as encrypted content (see `encryptedReasoning`).
   */
  store?: boolean;
  /**
   * Ask for `reasoning.encrypted_content` (added to `include`) and send reasoning items back
   * with it. Default: `store === false`, the only way reasoning reaches the next turn without
   * storage. Set it to `false` for a model that does not reason (gpt-4o, gpt-4.1, …) with
   * `store: false`: the API rejects that `include` for them.
   */
  encryptedReasoning?: boolean;
  /**
   * Sent as every function tool's `strict`. Default `false`: the schema means what it says,
   * as in Chat Completions. (Left out, the Responses API would rewrite each schema into strict
   * mode, making every property required.) `true` needs schemas with `additionalProperties:
   * false` and every property in `required`.
   */
  strictTools?: boolean;
  /**
   * The most input tokens one use of a server tool in `request.tools` (a web search's results)
   * adds to its request. OpenAI states no such bound; a strict `maxCostUsd` needs it, with the
   * request's `max_tool_calls`, to hold the worst case of a request that offers web search.
   */
  serverToolResultTokens?: number;
  /** Extra body fields for every request (`reasoning`, `temperature`, `include`, `tool_choice`, `parallel_tool_calls`, `max_tool_calls`, …). */
  request?: Record<string, unknown>;
}

/** The `AgentLoop` `fromOpenAIResponses` returns, with the conversation it keeps. */
export interface OpenAIResponsesLoop extends AgentLoop {
  /**
   * The conversation so far, as Responses input items: only items whose call succeeded, the
   * output items of each response as the API accepts them back (reasoning included).
   * Serializable; pass it as `items` to continue the conversation in a new loop.
   */
  readonly items: ResponseInputItem[];
}
