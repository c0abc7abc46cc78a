// The wrapped model on LangGraph's v3 events path, where LangChain calls `_streamChatModelEvents`
// with no run manager: a recorded answer goes to the one model run in flight, and where the runs
// in flight cannot be told apart the call is refused, never sent (sent, a call recorded as
// answered would go out uncharged).
import { BaseChatModel } from '@langchain/core/language_models/chat_models';
import { AIMessageChunk } from '@langchain/core/messages';
import { ChatGenerationChunk, type ChatResult } from '@langchain/core/outputs';
import { ServedCalls } from '../../../lib/integrations/langgraph/servedCalls';

class StreamingModel extends BaseChatModel {
  sent = 0;
  _llmType(): string {
    return 'streaming';
  }
  async _generate(): Promise<ChatResult> {
    throw new Error('streams only');
  }
  override async *_streamResponseChunks(): AsyncGenerator<ChatGenerationChunk> {
    this.sent += 1;
    yield new ChatGenerationChunk({ text: 'live', message: new AIMessageChunk({ content: 'live' }) });
  }
}

type EventsModel = { _streamChatModelEvents(m: unknown, o: unknown, r?: unknown): AsyncGenerator<unknown> };

async function texts(model: EventsModel, runManager?: { runId: string }): Promise<string> {
  let text = '';
  for await (const e of model._streamChatModelEvents([], {}, runManager)) {
    const delta = (e as { event?: string; delta?: { type?: string; text?: string } }).delta;
    if ((e as { event?: string }).event === 'content-block-delta' && delta?.type === 'text-delta')
      text += delta.text ?? '';
  }
  return text;
}

describe("ServedCalls' wrapped model on the v3 events path", () => {
  it('answers the one model run in flight from its record, sends a live one, and refuses a call it cannot tell apart', async () => {
    const inner = new StreamingModel({});
    const served = new ServedCalls();
    const model = served.wrapModel(inner) as unknown as EventsModel;

    served.serveResponse('a', { text: 'recorded' });
    expect(await texts(model)).toBe('recorded');
    expect(inner.sent).toBe(0);
    served.ended('a');

    served.modelSent('b');
    expect(await texts(model)).toBe('live');
    expect(inner.sent).toBe(1);
    served.ended('b');

    // Two runs in flight, one of them answered here: which is this call? Refused, and nothing sent.
    served.serveResponse('c', { text: 'recorded c' });
    served.modelSent('d');
    await expect(texts(model)).rejects.toThrow(/cannot be told apart/);
    expect(inner.sent).toBe(1);
    // With its run manager, a call is told apart as on every other path.
    expect(await texts(model, { runId: 'c' })).toBe('recorded c');
    expect(await texts(model, { runId: 'd' })).toBe('live');
    expect(inner.sent).toBe(2);
  });
});
