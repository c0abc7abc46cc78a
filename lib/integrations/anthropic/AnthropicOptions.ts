import type { MessageParam } from '@anthropic-ai/sdk/resources/messages';
import type { AgentLoop } from 'agent-state-machine';
import type { SdkTool, StreamTextHandler } from '../../internal/sdkTools';

/** A tool the LLM may call: description, JSON Schema of its input (sent as `input_schema`), and what running it does. */
export type AnthropicTool = SdkTool;

/** Options of `fromAnthropic(client, options)`. */
export interface AnthropicOptions {
  /** The model id, e.g. `claude-sonnet-4-6`. */
  model: string;
  /** The tools the LLM may call, by name. Read at every request, so changes made to the record in place reach the next one. */
  tools?: Record<string, AnthropicTool>;
  /** The system prompt (the request's `system`; not part of `messages`). */
  system?: string;
  /** A conversation to continue, in the Messages format. Copied, never modified. */
  messages?: MessageParam[];
  /** `max_tokens`, which the Messages API requires. Default 4096. */
  maxTokens?: number;
  /** Stream the response; `onText` gets the text as it arrives. */
  stream?: boolean | StreamTextHandler;
  /**
   * The most input tokens one use of a server tool in `request.tools` (a web search's results)
   * adds to its request. Anthropic states no such bound for web search; a strict `maxCostUsd`
   * needs it, with each tool's `max_uses`, to hold the worst case of a request that offers one.
   */
  serverToolResultTokens?: number;
  /** Extra body fields for every request (`temperature`, `thinking`, `tool_choice`, `metadata`, …). */
  request?: Record<string, unknown>;
}

/** The `AgentLoop` `fromAnthropic` returns, with the conversation it keeps. */
export interface AnthropicLoop extends AgentLoop {
  /** The conversation so far, in the Messages format: only messages whose call succeeded. Serializable. */
  readonly messages: MessageParam[];
}
