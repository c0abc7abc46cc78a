// A LangChain chat model that answers at once, for the mirror suites: a tool call, then text,
// again and again, with token usage; it states its max output tokens (a bound the ledger needs).
import { BaseChatModel } from '@langchain/core/language_models/chat_models';
import { AIMessage } from '@langchain/core/messages';
import type { ChatResult } from '@langchain/core/outputs';

class MockChatModel extends BaseChatModel {
  private n = 0;
  private readonly maxTokens: number;
  private readonly before: (() => void) | undefined;

  constructor(maxTokens: number, before: (() => void) | undefined) {
    super({});
    this.maxTokens = maxTokens;
    this.before = before;
  }

  override invocationParams(): Record<string, unknown> {
    return { model: 'mock-1', max_tokens: this.maxTokens };
  }

  _llmType(): string {
    return 'mock';
  }

  override bindTools(): this {
    return this;
  }

  async _generate(): Promise<ChatResult> {
    this.before?.();
    this.n += 1;
    const call = this.n % 2 === 1;
    const message = new AIMessage({
      content: call ? '' : 'done',
      tool_calls: call ? [{ id: `c${this.n}`, name: 'list', args: { dir: '.' }, type: 'tool_call' as const }] : [],
      usage_metadata: { input_tokens: 800, output_tokens: 30, total_tokens: 830 },
      response_metadata: { model_name: 'mock-1' },
    });
    return { generations: [{ text: call ? '' : 'done', message }] };
  }
}

/** A mock chat model; `before` runs before each call (the floor's write + fsync). */
export function mockChatModel(maxTokens: number, before?: () => void): BaseChatModel {
  return new MockChatModel(maxTokens, before);
}
