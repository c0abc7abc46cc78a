import type { BaseMessage } from '@langchain/core/messages';
import type { LLMResult } from '@langchain/core/outputs';
import type { MirrorResponse, ToolCall, Usage } from 'agent-state-machine';

/** LangChain's `usage_metadata` of an AI message. */
interface UsageMetadata {
  input_tokens?: number;
  output_tokens?: number;
  input_token_details?: { cache_read?: number; cache_creation?: number };
  output_token_details?: { reasoning?: number };
}

/** The AI message of a chat model's result, read as plain fields so that any @langchain/core 1.x fits. */
interface AiMessageLike {
  content?: unknown;
  tool_calls?: { id?: string; name: string; args?: unknown }[];
  usage_metadata?: UsageMetadata;
  response_metadata?: Record<string, unknown>;
}

/**
 * What the mirror records of one chat model result: the message's text, its tool calls, its
 * tokens (cached input and reasoning output as parts of the totals) and the model that
 * answered, from the response's metadata or else the request's.
 */
export function modelResponseOf(output: LLMResult, requested: string | undefined): MirrorResponse {
  const generation = output.generations?.[0]?.[0] as { message?: AiMessageLike; text?: string } | undefined;
  const message = generation?.message;
  const out: MirrorResponse = {};
  const text = message === undefined ? generation?.text : messageText(message);
  if (text !== undefined && text !== '') out.text = text;
  const calls: ToolCall[] = (message?.tool_calls ?? []).map((c, i) => ({
    id: c.id ?? `call-${i + 1}`,
    name: c.name,
    input: c.args,
  }));
  if (calls.length > 0) out.toolCalls = calls;
  const usage = usageOf(message?.usage_metadata ?? tokenUsage(output.llmOutput));
  if (usage !== undefined) out.usage = usage;
  const meta = message?.response_metadata ?? {};
  const model = meta.model_name ?? meta.model ?? requested;
  if (typeof model === 'string') out.model = model;
  const finish = meta.finish_reason ?? meta.stop_reason;
  out.finishReason = typeof finish === 'string' ? finish : calls.length > 0 ? 'tool_calls' : 'stop';
  return out;
}

/** The library's usage from LangChain's `usage_metadata`. */
export function usageOf(meta: UsageMetadata | undefined): Usage | undefined {
  if (meta === undefined || meta === null) return undefined;
  const usage: Usage = { inputTokens: meta.input_tokens, outputTokens: meta.output_tokens };
  if (meta.input_token_details?.cache_read !== undefined) usage.cachedInputTokens = meta.input_token_details.cache_read;
  if (meta.input_token_details?.cache_creation !== undefined)
    usage.cacheWriteTokens = meta.input_token_details.cache_creation;
  if (meta.output_token_details?.reasoning !== undefined) usage.reasoningTokens = meta.output_token_details.reasoning;
  return usage;
}

/** Older chat models report tokens only in `llmOutput.tokenUsage`. */
function tokenUsage(llmOutput: Record<string, unknown> | undefined): UsageMetadata | undefined {
  const t = llmOutput?.tokenUsage as { promptTokens?: number; completionTokens?: number } | undefined;
  if (t === undefined) return undefined;
  return { input_tokens: t.promptTokens, output_tokens: t.completionTokens };
}

/** A message's (or a tool's output's) text: string content, or its text parts joined. */
export function messageText(message: unknown): string {
  if (typeof message === 'string') return message;
  const content = (message as { content?: unknown } | undefined)?.content;
  if (typeof content === 'string') return content;
  if (Array.isArray(content))
    return content
      .map((p) => (typeof p === 'string' ? p : typeof p?.text === 'string' ? (p.text as string) : ''))
      .join('');
  if (message === undefined || message === null) return '';
  try {
    return JSON.stringify(message) ?? String(message);
  } catch {
    return String(message);
  }
}

/** The user's message of a graph's input: the last human message of `messages`, or the input itself as text. */
export function userText(inputs: unknown): string {
  const messages = (inputs as { messages?: unknown } | undefined)?.messages;
  if (Array.isArray(messages)) {
    for (let i = messages.length - 1; i >= 0; i--) {
      const m = messages[i] as { role?: unknown; _getType?: () => string; getType?: () => string };
      const type = m?.role ?? m?.getType?.() ?? m?._getType?.();
      if (type === 'user' || type === 'human') return messageText(m);
    }
    return '';
  }
  return typeof inputs === 'string' ? inputs : '';
}

/** The answer of a graph's run: the text of the last message of its output's `messages`, if it has any. */
export function lastAiText(outputs: Record<string, unknown> | undefined): string | undefined {
  const messages = (outputs as { messages?: unknown } | undefined)?.messages;
  if (!Array.isArray(messages)) return undefined;
  const last = messages.at(-1) as BaseMessage | undefined;
  return last === undefined ? undefined : messageText(last);
}
