// The sides of the `meter` bench, one observed call each, against one local Chat Completions
// server with the real `openai` client: `metered` sends through `meteredFetch`; `hand` through
// a passthrough fetch, its loop telling the run's mirror of the call by hand (the bound it sent,
// the usage the SDK parsed), as a loop without the meter would; `none` through the passthrough
// with nothing told (the run sees no model call). Streamed: 2,000 chunks; JSON: the same text.
import OpenAI from 'openai';
import type { CompletionUsage } from 'openai/resources/completions';
import type { LLMResponse } from '../lib/agent/AgentLoop';
import { observeLoop } from '../lib/index';
import { meteredFetch } from '../lib/integrations/openai';
import { chatWire } from '../lib/integrations/openai/chatWire';
import { mapOpenAIUsage } from '../lib/integrations/openai/fromOpenAIChat';
import { observeScope } from '../lib/observe/observeScope';
import { startOpenAIChatServer } from '../examples/servers/openaiChatServer';

export type MeterSide = 'hand' | 'metered' | 'none';
export type MeterKind = 'streamed' | 'json';

/** 16,000 characters: the local server streams 8 a chunk. */
const TEXT = 'abcdefg '.repeat(2_000);
const OUTPUT_TOKENS = 4_000;

const pricing = (u: { inputTokens?: number; outputTokens?: number }): number | undefined =>
  u.inputTokens === undefined || u.outputTokens === undefined ? undefined : (u.inputTokens + u.outputTokens) * 5e-6;

export interface MeterSides {
  /** One observed run of `side` making one `kind` call. */
  once(side: MeterSide, kind: MeterKind): () => Promise<void>;
  close(): Promise<void>;
}

export async function meterSides(): Promise<MeterSides> {
  const server = await startOpenAIChatServer({
    respond: () => ({ content: TEXT, usage: { prompt_tokens: 20, completion_tokens: OUTPUT_TOKENS } }),
  });
  const bare = new OpenAI({ baseURL: server.baseURL, apiKey: 'sk-local', fetch: (i, init) => fetch(i, init) });
  const metered = new OpenAI({ baseURL: server.baseURL, apiKey: 'sk-local', fetch: meteredFetch });
  const request = {
    model: 'gpt-local',
    messages: [{ role: 'user' as const, content: 'go' }],
    max_completion_tokens: 8_000,
  };
  const streamOnce = async (client: OpenAI): Promise<LLMResponse> => {
    const stream = await client.chat.completions.create({
      ...request,
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = '';
    let usage: CompletionUsage | undefined;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta?.content ?? '';
      usage = chunk.usage ?? usage;
    }
    if (text.length !== TEXT.length) throw new Error(`read ${text.length} characters, expected ${TEXT.length}`);
    return { text, usage: mapOpenAIUsage(usage) };
  };
  const jsonOnce = async (client: OpenAI): Promise<LLMResponse> => {
    const completion = await client.chat.completions.create(request);
    if (completion.choices[0]?.message.content !== TEXT) throw new Error('the answer was not read whole');
    return chatWire.read(completion);
  };
  /** Money at the loop: the loop tells the run's mirror of its call (its bound, then its answer). */
  const byHand = (call: () => Promise<LLMResponse>) => async (): Promise<void> => {
    const { mirror } = observeScope.getStore()!;
    const bound = chatWire.bound(request);
    if (typeof bound === 'string') throw new Error(bound);
    const stop = await mirror.modelCallStart(bound);
    if (stop !== undefined) throw new Error(`the run refused the call: ${stop.message}`);
    mirror.modelResponse(await call());
  };
  return {
    once(side, kind) {
      const call = kind === 'streamed' ? streamOnce : jsonOnce;
      const work: () => Promise<unknown> =
        side === 'hand' ? byHand(() => call(bare)) : side === 'metered' ? () => call(metered) : () => call(bare);
      return async () => {
        const { result } = await observeLoop({ budget: { maxCostUsd: 100 }, pricing, logger: false }, 'go', work);
        if (side !== 'none' && (result.outcome !== 'end_of_turn' || result.usage.outputTokens !== OUTPUT_TOKENS))
          throw new Error(`the observed run ended ${result.outcome}: ${result.error?.message}`);
      };
    },
    close: () => server.close(),
  };
}
