import type { ChatCompletion, ChatCompletionChunk } from 'openai/resources/chat/completions';
import type { OutputBoundWatch } from 'agent-state-machine';
import { ChatStreamFold } from './ChatStreamFold';

/**
 * Folds a stream of chunks into the completion it stands for (`ChatStreamFold`). A stream that
 * ends before a finish reason was dropped: that is an error (so the attempt is retried), never a
 * short answer.
 */
export async function collectChatStream(
  chunks: AsyncIterable<ChatCompletionChunk>,
  onText: (delta: string) => void,
  watch: OutputBoundWatch,
): Promise<ChatCompletion> {
  const fold = new ChatStreamFold(watch, onText);
  for await (const chunk of chunks) fold.event(chunk);
  return fold.end();
}
