import type { ChatCompletion, ChatCompletionChunk } from 'openai/resources/chat/completions';
import type { OutputBoundWatch } from 'agent-state-machine';
import { ChatStreamFold } from './ChatStreamFold';

/**
 * Folds a stream of chunks into the completion it stands for (`ChatStreamFold`). A stream that
 * ends before a finish reason was dropped: that is an error (so the attempt is retried), never a
 * short answer. A stream cut after its usage chunk lost only `[DONE]`: its answer is whole, and
 * billed at that usage, never sent again.
 */
export async function collectChatStream(
  chunks: AsyncIterable<ChatCompletionChunk>,
  onText: (delta: string) => void,
  watch: OutputBoundWatch,
): Promise<ChatCompletion> {
  const fold = new ChatStreamFold(watch, onText);
  const iterator = chunks[Symbol.asyncIterator]();
  for (;;) {
    let next: IteratorResult<ChatCompletionChunk>;
    try {
      next = await iterator.next();
    } catch (error) {
      // The transport failed: after the final usage chunk only `[DONE]` was lost. A fold's own
      // error (the cut at the bound, a throwing onText) is not caught here.
      if (fold.whole) break;
      throw error;
    }
    if (next.done === true) break;
    fold.event(next.value);
  }
  return fold.end();
}
