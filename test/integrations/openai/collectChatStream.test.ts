import type { ChatCompletionChunk } from 'openai/resources/chat/completions';
import { watchOutputBound } from 'agent-state-machine';
import { collectChatStream } from '../../../lib/integrations/openai/collectChatStream';

// A Chat Completions stream whose transport breaks after its final usage chunk lost only
// `[DONE]`: its answer is whole. Anything else cut stays a failure: a stream cut before that
// chunk, a running count (vLLM's continuous usage stats) before the finish, and the cut at the
// request's bound, which is the fold's own error, not the transport's.

const chunk = (delta: object, finish: string | null = null, usage?: object): ChatCompletionChunk =>
  ({
    id: 'c1',
    object: 'chat.completion.chunk',
    created: 0,
    model: 'gpt-local',
    choices: [{ index: 0, delta, finish_reason: finish, logprobs: null }],
    ...(usage && { usage }),
  }) as ChatCompletionChunk;
const finalUsage = (usage: object): ChatCompletionChunk =>
  ({
    id: 'c1',
    object: 'chat.completion.chunk',
    created: 0,
    model: 'gpt-local',
    choices: [],
    usage,
  }) as ChatCompletionChunk;

/** The chunks, then the transport's failure. */
async function* breaking(chunks: ChatCompletionChunk[]): AsyncGenerator<ChatCompletionChunk> {
  yield* chunks;
  throw new TypeError('terminated');
}

const watch = (max = 100) => watchOutputBound(max, new AbortController().signal);

describe('collectChatStream when the transport breaks', () => {
  it('after the final usage chunk: the answer, whole, with its usage', async () => {
    const usage = { prompt_tokens: 40, completion_tokens: 3, total_tokens: 43 };
    const completion = await collectChatStream(
      breaking([chunk({ content: 'done' }), chunk({}, 'stop'), finalUsage(usage)]),
      () => undefined,
      watch(),
    );
    expect(completion.choices[0]!.message.content).toBe('done');
    expect(completion.usage).toEqual(usage);
  });

  it('after the finish but before the usage chunk: a failure', async () => {
    await expect(
      collectChatStream(breaking([chunk({ content: 'done' }), chunk({}, 'stop')]), () => undefined, watch()),
    ).rejects.toThrow('terminated');
  });

  it('after a running count that came before the finish: a failure (the count is not the bill)', async () => {
    const running = { prompt_tokens: 40, completion_tokens: 1, total_tokens: 41 };
    await expect(
      collectChatStream(
        breaking([chunk({ content: 'do' }, null, running), chunk({ content: 'ne' }, 'stop', running)]),
        () => undefined,
        watch(),
      ),
    ).rejects.toThrow('terminated');
  });

  it('the cut at the bound stays a failure, even after a finish and a usage chunk', async () => {
    const usage = { prompt_tokens: 40, completion_tokens: 3, total_tokens: 43 };
    // A server that goes on after its finish and its usage, past the request's bound.
    const chunks = [chunk({ content: 'ok' }, 'stop'), finalUsage(usage), chunk({ content: 'word '.repeat(200) })];
    await expect(collectChatStream(breaking(chunks), () => undefined, watch(10))).rejects.toThrow(/bound/);
  });
});
