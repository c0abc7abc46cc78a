import type {
  ChatCompletionAssistantMessageParam,
  ChatCompletionMessage,
  ChatCompletionMessageFunctionToolCall,
} from 'openai/resources/chat/completions';
import type { ToolCall } from 'agent-state-machine';
import { uniqueCallIds } from '../../internal/uniqueCallIds';

/**
 * A response's message as the conversation keeps it (`assistant`) and the function calls it
 * makes. Empty or repeated ids get fresh ones (`freshId`), in the conversation kept and in the
 * calls returned alike.
 */
export function readChatMessage(
  message: ChatCompletionMessage,
  freshId: () => string,
): { assistant: ChatCompletionAssistantMessageParam; toolCalls: ToolCall[] } {
  const calls = (message.tool_calls ?? []).filter(
    (c): c is ChatCompletionMessageFunctionToolCall => c.type === 'function',
  );
  const ids = uniqueCallIds(
    calls.map((c) => c.id ?? ''),
    freshId,
  );
  const assistant: ChatCompletionAssistantMessageParam = { role: 'assistant', content: message.content ?? null };
  if (calls.length > 0)
    assistant.tool_calls = calls.map((c, i) => ({
      id: ids[i]!,
      type: 'function',
      function: { name: c.function.name, arguments: c.function.arguments },
    }));
  if (typeof message.refusal === 'string') assistant.refusal = message.refusal;
  const toolCalls: ToolCall[] = calls.map((c, i) => ({
    id: ids[i]!,
    name: c.function.name,
    input: c.function.arguments,
  }));
  return { assistant, toolCalls };
}
