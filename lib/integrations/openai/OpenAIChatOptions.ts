import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import type { AgentLoop } from 'agent-state-machine';
import type { SdkTool, StreamTextHandler } from '../../internal/sdkTools';

/** A tool the LLM may call: description, JSON Schema of its input, and what running it does. */
export type OpenAIChatTool = SdkTool;

/** Options of `fromOpenAIChat(client, options)`. */
export interface OpenAIChatOptions {
  /** The model id, e.g. `gpt-4o-mini` (or whatever the OpenAI-compatible endpoint serves). */
  model: string;
  /** The tools the LLM may call, by name. Read at every request, so changes made to the record in place reach the next one. */
  tools?: Record<string, OpenAIChatTool>;
  /** The system prompt: the first message of `messages`. */
  system?: string;
  /** A conversation to continue, in the Chat Completions format. Copied, never modified. */
  messages?: ChatCompletionMessageParam[];
  /**
   * Sent as `max_completion_tokens`. For a server that wants `max_tokens`, use `request: { max_tokens }`.
   * A strict `maxCostUsd` needs one (it bounds each call's output), and lowers it when little is left.
   */
  maxTokens?: number;
  /** Stream the response (usage is asked for with `stream_options.include_usage`); `onText` gets the text as it arrives. */
  stream?: boolean | StreamTextHandler;
  /** Extra body fields for every request (`temperature`, `parallel_tool_calls`, `reasoning_effort`, …). */
  request?: Record<string, unknown>;
}

/** The `AgentLoop` `fromOpenAIChat` returns, with the conversation it keeps. */
export interface OpenAIChatLoop extends AgentLoop {
  /** The conversation so far, in the Chat Completions format: only messages whose call succeeded. Serializable. */
  readonly messages: ChatCompletionMessageParam[];
}
