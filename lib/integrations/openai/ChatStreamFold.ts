import type { ChatCompletion, ChatCompletionChunk } from 'openai/resources/chat/completions';
import type { CompletionUsage } from 'openai/resources/completions';
import type { OutputBoundWatch } from 'agent-state-machine';

/**
 * Folds a Chat Completions stream's chunks, one at a time, into the completion it stands for,
 * feeding every output delta to `watch` and text deltas to `onText`. A stream that ends before a
 * finish reason was dropped: `end` throws (so the attempt is retried), never a short answer.
 */
export class ChatStreamFold {
  #model = '';
  #id = '';
  #content: string | null = null;
  #refusal: string | null = null;
  #finishReason: ChatCompletion.Choice['finish_reason'] | null = null;
  #usage: CompletionUsage | undefined;
  /** The final usage chunk came: usage with no choices, after the finish (not a running count). */
  #finalUsage = false;
  readonly #calls: { id: string; name: string; arguments: string }[] = [];

  private readonly watch: OutputBoundWatch;
  private readonly onText: (delta: string) => void;

  constructor(watch: OutputBoundWatch, onText: (delta: string) => void = () => undefined) {
    this.watch = watch;
    this.onText = onText;
  }

  event(json: unknown): void {
    const chunk = json as ChatCompletionChunk;
    const { watch } = this;
    this.#id ||= chunk.id;
    this.#model ||= chunk.model;
    if (chunk.usage) {
      this.#usage = chunk.usage;
      // A running count (vLLM's continuous usage stats), not the final one: the answer is whole by then.
      if (this.#finishReason === null) watch.reported(chunk.usage.completion_tokens);
      else if ((chunk.choices ?? []).length === 0) this.#finalUsage = true;
    }
    const choice = chunk.choices?.[0];
    if (choice === undefined) return;
    const delta = choice.delta ?? {};
    if (typeof delta.content === 'string' && delta.content !== '') {
      this.#content = (this.#content ?? '') + delta.content;
      this.onText(delta.content);
      watch.add(delta.content);
    }
    if (typeof delta.refusal === 'string') {
      this.#refusal = (this.#refusal ?? '') + delta.refusal;
      watch.add(delta.refusal);
    }
    // Reasoning some compatible servers stream (vLLM, DeepSeek, OpenRouter) is output too.
    const reasoning =
      (delta as { reasoning_content?: unknown; reasoning?: unknown }).reasoning_content ??
      (delta as { reasoning?: unknown }).reasoning;
    if (typeof reasoning === 'string') watch.add(reasoning);
    for (const part of delta.tool_calls ?? []) {
      const slot = (this.#calls[part.index] ??= { id: '', name: '', arguments: '' });
      if (part.id) slot.id = part.id;
      if (part.function?.name) slot.name += part.function.name;
      if (part.function?.arguments) {
        slot.arguments += part.function.arguments;
        watch.add(part.function.arguments);
      }
    }
    if (choice.finish_reason) this.#finishReason = choice.finish_reason;
  }

  /**
   * Whether the answer came whole: finished, and then its usage chunk, which the API sends last,
   * just before `[DONE]`. A stream cut after that lost nothing of the answer.
   */
  get whole(): boolean {
    return this.#finalUsage;
  }

  end(): ChatCompletion {
    const finishReason = this.#finishReason;
    if (finishReason === null)
      throw new Error(
        'the response stream ended before the model finished (no finish_reason): the connection was dropped',
      );
    const calls = this.#calls;
    return {
      id: this.#id,
      object: 'chat.completion',
      created: 0,
      model: this.#model,
      choices: [
        {
          index: 0,
          finish_reason: finishReason,
          logprobs: null,
          message: {
            role: 'assistant',
            content: this.#content,
            refusal: this.#refusal,
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
      ...(this.#usage !== undefined ? { usage: this.#usage } : {}),
    };
  }
}
