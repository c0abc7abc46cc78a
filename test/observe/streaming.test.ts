// Streamed answers through the metered fetch: read beside the SDK as they arrive, settled when
// they end — billed from the usage chunk, uncertain when the stream is dropped or reports none,
// cut at the request's max tokens when the server ignores them — and served from the journal to
// a resumed run as the API streams. The real `openai` and Anthropic clients, at their defaults.
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import {
  AgentWithStateMachine,
  meterFetch,
  observeLoop,
  type JournalLine,
  type RecordedLine,
} from 'agent-state-machine';
import { messagesWire } from '../../lib/integrations/anthropic';
import { fromOpenAIChat, meteredFetch } from '../../lib/integrations/openai';
import { startOpenAIChatServer, type ChatAction, type OpenAIChatServer } from '../../examples/servers/openaiChatServer';
import { fixture, recordedFetch } from '../fixtures/recordedFetch';
import { localPricing, USD_PER_TOKEN } from '../helpers/localPricing';
import { journalInto } from '../helpers/journalInto';

/** A streamed chat call, read the way user code reads one. */
async function streamed(client: OpenAI, maxTokens: number): Promise<string> {
  const stream = await client.chat.completions.create({
    model: 'gpt-local',
    messages: [{ role: 'user', content: 'hi' }],
    max_completion_tokens: maxTokens,
    stream: true,
    stream_options: { include_usage: true },
  });
  let text = '';
  for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
  return text;
}

describe('Chat Completions streams', () => {
  let server: OpenAIChatServer;
  let script: ChatAction[];
  beforeEach(async () => {
    server = await startOpenAIChatServer({
      ignoresMaxTokens: true,
      respond: (_b, i) => script[i] ?? { content: 'done' },
    });
  });
  afterEach(() => server.close());
  const client = () => new OpenAI({ baseURL: server.baseURL, apiKey: 'sk-local', fetch: meteredFetch, maxRetries: 0 });

  it('charges a whole stream from its usage chunk, as billed', async () => {
    script = [{ content: 'streamed answer', usage: { prompt_tokens: 40, completion_tokens: 3 } }];
    const { result, value } = await observeLoop(
      { budget: { maxCostUsd: 1 }, pricing: localPricing, logger: false },
      'hi',
      () => streamed(client(), 50),
    );
    expect(value).toBe('streamed answer');
    expect(result.outcome).toBe('end_of_turn');
    expect(result.usage).toMatchObject({ llmCalls: 1, inputTokens: 40, outputTokens: 3, uncertainUsd: 0 });
    expect(result.usage.costUsd).toBeCloseTo(43 * USD_PER_TOKEN, 12);
  });

  it('charges a stream the loop stopped reading from its usage chunk: it is read to its end beside the SDK', async () => {
    script = [{ content: 'a much longer streamed answer', usage: { prompt_tokens: 40, completion_tokens: 7 } }];
    const { result, value } = await observeLoop(
      { budget: { maxCostUsd: 1 }, pricing: localPricing, logger: false },
      'hi',
      async () => {
        const stream = await client().chat.completions.create({
          model: 'gpt-local',
          messages: [{ role: 'user', content: 'hi' }],
          max_completion_tokens: 50,
          stream: true,
          stream_options: { include_usage: true },
        });
        // Leaving the loop cancels the SDK's stream.
        for await (const chunk of stream) if (chunk.choices[0]?.delta?.content) return chunk.choices[0].delta.content;
        return '';
      },
    );
    expect(value).toBe('a much l');
    expect(result.outcome).toBe('end_of_turn');
    expect(result.usage).toMatchObject({ llmCalls: 1, inputTokens: 40, outputTokens: 7, uncertainUsd: 0 });
  });

  it('holds a dropped stream at its worst case, as uncertain, with the reason in the journal', async () => {
    script = [{ content: 'streamed answer', dropAfterChunks: 1 }];
    const lines: JournalLine[] = [];
    const { result } = await observeLoop(
      { budget: { maxCostUsd: 1 }, pricing: localPricing, logger: false, journal: true, ...journalInto(lines) },
      'hi',
      () => streamed(client(), 50),
    );
    expect(result.outcome).toBe('error');
    expect(result.usage.uncertainUsd).toBeGreaterThan(0);
    expect(result.usage.costUsd).toBe(result.usage.uncertainUsd);
    expect(lines.find((l) => (l as { type: string }).type === 'llm')).toMatchObject({
      chargedAtHold: expect.any(String),
    });
  });

  it('bills a stream cut after its usage chunk (only [DONE] lost) at that usage, on the meter and the ready-made loop', async () => {
    // Every chunk sent, the usage chunk last, then the connection dropped before [DONE].
    script = [
      { content: 'streamed answer', usage: { prompt_tokens: 40, completion_tokens: 3 }, dropAfterChunks: 1000 },
    ];
    const observed = await observeLoop({ budget: { maxCostUsd: 1 }, pricing: localPricing, logger: false }, 'hi', () =>
      streamed(client(), 50).catch(() => 'the SDK saw the drop'),
    );
    expect(observed.result.usage).toMatchObject({ llmCalls: 1, inputTokens: 40, outputTokens: 3, uncertainUsd: 0 });
    expect(observed.result.usage.costUsd).toBeCloseTo(43 * USD_PER_TOKEN, 12);
    // The ready-made loop takes the whole answer and does not send it again (before, it retried and paid twice).
    script.push(script[0]!);
    const before = server.exchanges.length;
    const loop = fromOpenAIChat(new OpenAI({ baseURL: server.baseURL, apiKey: 'sk-local' }), {
      model: 'gpt-local',
      maxTokens: 50,
      stream: true,
    });
    const result = await new AgentWithStateMachine(loop, { logger: false, pricing: localPricing }).runTurn('hi');
    expect(result).toMatchObject({ outcome: 'end_of_turn', text: 'streamed answer' });
    expect(result.usage).toMatchObject({ llmCalls: 1, inputTokens: 40, outputTokens: 3, uncertainUsd: 0 });
    expect(server.exchanges.length - before).toBe(1);
  });

  it('cuts a stream at the request max tokens when the server does not stop there', async () => {
    script = [{ content: 'word '.repeat(400), usage: { prompt_tokens: 40, completion_tokens: 400 } }];
    const { result } = await observeLoop(
      { budget: { maxCostUsd: 1 }, pricing: localPricing, logger: false },
      'hi',
      () => streamed(client(), 20),
    );
    expect(result.outcome).toBe('error');
    expect(result.error?.message).toMatch(
      /the response stream was cut at its bound: \d+ output tokens counted, its max 20/,
    );
    // Charged at most its bound: 20 output tokens and the request's input bound.
    expect(result.usage.costUsd).toBeLessThan(2_000 * USD_PER_TOKEN);
  });

  it('serves a resumed run its journaled answer as a stream, with no request', async () => {
    script = [{ content: 'streamed answer', usage: { prompt_tokens: 40, completion_tokens: 3 } }];
    const lines: JournalLine[] = [];
    await observeLoop({ logger: false, journal: true, ...journalInto(lines) }, 'hi', async () => {
      await streamed(client(), 50);
      throw new Error('killed after the answer');
    });
    const again = await observeLoop(
      { logger: false, journal: true, resumeFrom: { journal: lines as unknown as RecordedLine[] }, ...journalInto([]) },
      'hi',
      () => streamed(client(), 50),
    );
    expect(again.value).toBe('streamed answer');
    expect(server.exchanges).toHaveLength(1);
  });
});

describe('Anthropic Messages streams, recorded', () => {
  const pricing = (u: { inputTokens?: number; outputTokens?: number }) =>
    u.inputTokens === undefined || u.outputTokens === undefined
      ? undefined
      : (u.inputTokens * 3 + u.outputTokens * 15) / 1e6;

  it.each([
    ['compaction_usage.sse', 203_000, 4_500],
    ['tool_use_response.sse', undefined, undefined],
    ['message_in_start.sse', undefined, undefined],
  ])('reads %s with the usage it reports', async (file, input, output) => {
    const recorded = recordedFetch('anthropic', [file]);
    const client = new Anthropic({ apiKey: 'sk-local', fetch: meterFetch([messagesWire], recorded.fetch) });
    const { result } = await observeLoop({ pricing, logger: false }, 'go', async () => {
      const stream = client.messages.stream({
        model: 'claude-sonnet-4-6',
        max_tokens: 64_000,
        messages: [{ role: 'user', content: 'go' }],
      });
      return (await stream.finalMessage()).content.flatMap((b) => (b.type === 'text' ? [b.text] : [])).join('');
    });
    expect(result.usage.llmCalls).toBe(1);
    expect(result.usage.uncertainUsd).toBe(0);
    // The recording's own usage, summed over its iterations where it has them.
    const events = fixture('anthropic', file)
      .split('\n')
      .filter((l) => l.startsWith('data: '))
      .map(
        (l) =>
          JSON.parse(l.slice(6)) as {
            type: string;
            message?: { usage: { input_tokens: number } };
            usage?: { output_tokens: number };
          },
      );
    const start = events.find((e) => e.type === 'message_start')!.message!.usage.input_tokens;
    const end = events.filter((e) => e.type === 'message_delta').at(-1)!.usage!.output_tokens;
    expect(result.usage.inputTokens).toBe(input ?? start);
    expect(result.usage.outputTokens).toBe(output ?? end);
  });
});
