import type { BaseMessage } from '@langchain/core/messages';
import type { LLMCallBound } from 'agent-state-machine';
import { requestTokenBound } from '../../internal/requestTokenBound';

/** Where chat models state their max output tokens in their invocation params (OpenAI, Responses, Anthropic, Google, …). */
const MAX_KEYS = ['max_tokens', 'max_completion_tokens', 'max_output_tokens', 'maxTokens', 'maxOutputTokens'] as const;

/**
 * The bound of one chat model call from what LangChain's `handleChatModelStart` reports: the
 * messages (serialized, with their tool calls) and the invocation params' tools, functions,
 * tool choice and response format bound the input tokens (`requestTokenBound`); the max output
 * tokens come from the invocation params (`max_tokens`, `max_completion_tokens`,
 * `max_output_tokens`, `maxTokens`, `maxOutputTokens`) or the run's `ls_max_tokens` metadata.
 * A chat model that states none of them has no bound LangGraph can give: says why.
 */
export function chatModelBound(
  messages: BaseMessage[][],
  params: Record<string, unknown> | undefined,
  metadata: Record<string, unknown> | undefined,
  model: string | undefined,
): LLMCallBound | string {
  const max = chatModelMaxTokens(params, metadata);
  if (!(typeof max === 'number' && Number.isSafeInteger(max) && max >= 0))
    return max === undefined
      ? 'the chat model states no max output tokens (max_tokens, max_completion_tokens, max_output_tokens or ls_max_tokens), so its output (and its cost) has no bound: set maxTokens on the chat model'
      : `the chat model's max output tokens is ${String(max)}, not a non-negative integer`;
  const flat = messages.flat();
  const tools = Array.isArray(params?.tools) ? params.tools : [];
  const functions = Array.isArray(params?.functions) ? params.functions : [];
  const body = {
    messages: flat.map(sentFields),
    tools: params?.tools,
    functions: params?.functions,
    tool_choice: params?.tool_choice,
    response_format: params?.response_format,
  };
  const bound: LLMCallBound = {
    inputTokens: requestTokenBound(body, flat.length, tools.length + functions.length),
    maxOutputTokens: max,
  };
  if (model !== undefined) bound.model = model;
  return bound;
}

/**
 * What a provider's request is made of, of one LangChain message: its content, name, role (a
 * ChatMessage's), tool calls (valid or not), tool call id and additional kwargs (a raw
 * `function_call` or `tool_calls`, audio). Not its id, response metadata or usage, which no
 * request carries. Serializing the message itself (its `toJSON`, LangChain's serializable form
 * of every field) cost 15 µs for a three-message conversation, before every model call.
 */
function sentFields(message: BaseMessage): unknown {
  if (typeof message !== 'object' || message === null) return message;
  const m = message as unknown as Record<string, unknown>;
  return {
    role: m.role,
    name: m.name,
    content: m.content,
    tool_calls: m.tool_calls,
    invalid_tool_calls: m.invalid_tool_calls,
    tool_call_id: m.tool_call_id,
    additional_kwargs: m.additional_kwargs,
  };
}

/** The max output tokens a chat model states for a call (as given: unchecked), from its invocation params or `ls_max_tokens`. */
export function chatModelMaxTokens(
  params: Record<string, unknown> | undefined,
  metadata: Record<string, unknown> | undefined,
): unknown {
  let max: unknown;
  for (const key of MAX_KEYS) if (max === undefined) max = params?.[key];
  return max ?? metadata?.ls_max_tokens;
}
