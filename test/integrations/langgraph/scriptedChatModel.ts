// A LangChain chat model that answers from a script, for LangGraph agents in tests: each step an
// AI message (text, tool calls, token usage) or an error to throw. `bindTools` keeps the script,
// so a prebuilt ReAct agent can bind its tools to it; `requests` says which calls were made.
import { BaseChatModel, type BaseChatModelParams } from '@langchain/core/language_models/chat_models';
import { AIMessage, type BaseMessage } from '@langchain/core/messages';
import type { ChatResult } from '@langchain/core/outputs';

export type ScriptedStep =
  | {
      text?: string;
      calls?: { id: string; name: string; args?: Record<string, unknown> }[];
      inputTokens?: number;
      outputTokens?: number;
    }
  | { error: Error };

export class ScriptedChatModel extends BaseChatModel {
  readonly requests: BaseMessage[][];
  readonly #queue: ScriptedStep[];
  /** Stated in the invocation params as `max_tokens`, as ChatOpenAI and ChatAnthropic state theirs. */
  readonly maxTokens: number | undefined;

  constructor(steps: ScriptedStep[], params: BaseChatModelParams & { maxTokens?: number } = {}) {
    const { maxTokens, ...base } = params;
    super(base);
    this.#queue = [...steps];
    this.requests = [];
    this.maxTokens = maxTokens;
  }

  override invocationParams(): Record<string, unknown> {
    return this.maxTokens === undefined ? {} : { model: 'scripted-1', max_tokens: this.maxTokens };
  }

  get left(): number {
    return this.#queue.length;
  }

  _llmType(): string {
    return 'scripted';
  }

  override bindTools(): this {
    return this;
  }

  async _generate(messages: BaseMessage[]): Promise<ChatResult> {
    this.requests.push(messages);
    const step = this.#queue.shift();
    if (step === undefined) throw new Error(`scripted model: no step left for call ${this.requests.length}`);
    if ('error' in step) throw step.error;
    const inputTokens = step.inputTokens ?? 100;
    const outputTokens = step.outputTokens ?? 10;
    const message = new AIMessage({
      content: step.text ?? '',
      tool_calls: (step.calls ?? []).map((c) => ({
        id: c.id,
        name: c.name,
        args: c.args ?? {},
        type: 'tool_call' as const,
      })),
      usage_metadata: {
        input_tokens: inputTokens,
        output_tokens: outputTokens,
        total_tokens: inputTokens + outputTokens,
      },
      response_metadata: { model_name: 'scripted-1' },
    });
    return { generations: [{ text: step.text ?? '', message }] };
  }
}
