import type { ChatCompletion, ChatCompletionChunk } from 'openai/resources/chat/completions';
import type { CompletionUsage } from 'openai/resources/completions';
import type { OutputBoundWatch } from 'agent-state-machine';

/**
 * Folds a stream of chunks into the completion it stands for. A stream that ends before a
 * finish reason was dropped: that is an error (so the attempt is retried), never a short answer.
 */
export async function collectChatStream(
  chunks: AsyncIterable<ChatCompletionChunk>,
  onText: (delta: string) => void,
  watch: OutputBoundWatch,
): Promise<ChatCompletion> {
  let model = '';
  let id = '';
  let content: string | null = null;
  let refusal: string | null = null;
  let finishReason: ChatCompletion.Choice['finish_reason'] | null = null;
  let usage: CompletionUsage | undefined;
  const calls: { id: string; name: string; arguments: string }[] = [];
  for await (const chunk of chunks) {
    id ||= chunk.id;
    model ||= chunk.model;
    if (chunk.usage) {
      usage = chunk.usage;
      // A running count (vLLM's continuous usage stats), not the final one: the answer is whole by then.
      if (finishReason === null) watch.reported(chunk.usage.completion_tokens);
    }
    const choice = chunk.choices?.[0];
    if (choice === undefined) continue;
    const delta = choice.delta ?? {};
    if (typeof delta.content === 'string' && delta.content !== '') {
      content = (content ?? '') + delta.content;
      onText(delta.content);
      watch.add(delta.content);
    }
    if (typeof delta.refusal === 'string') {
      refusal = (refusal ?? '') + delta.refusal;
      watch.add(delta.refusal);
    }
    // Reasoning some compatible servers stream (vLLM, DeepSeek, OpenRouter) is output too.
    const reasoning =
      (delta as { reasoning_content?: unknown; reasoning?: unknown }).reasoning_content ??
      (delta as { reasoning?: unknown }).reasoning;
    if (typeof reasoning === 'string') watch.add(reasoning);
    for (const part of delta.tool_calls ?? []) {
      const slot = (calls[part.index] ??= { id: '', name: '', arguments: '' });
      if (part.id) slot.id = part.id;
      if (part.function?.name) slot.name += part.function.name;
      if (part.function?.arguments) {
        slot.arguments += part.function.arguments;
        watch.add(part.function.arguments);
      }
    }
    if (choice.finish_reason) finishReason = choice.finish_reason;
  }
  if (finishReason === null)
    throw new Error(
      'the response stream ended before the model finished (no finish_reason): the connection was dropped',
    );
  return {
    id,
    object: 'chat.completion',
    created: 0,
    model,
    choices: [
      {
        index: 0,
        finish_reason: finishReason,
        logprobs: null,
        message: {
          role: 'assistant',
          content,
          refusal,
          ...(calls.length > 0
            ? {
                tool_calls: calls.filter(Boolean).map((c) => ({
                  id: c.id,
                  type: 'function' as const,
                  function: { name: c.name, arguments: c.arguments },
                })),
              }
            : {}),
        },
      },
    ],
    ...(usage !== undefined ? { usage } : {}),
  };
}
