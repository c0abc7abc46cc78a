// Issue 50, on the AI SDK mirror: @ai-sdk/openai against a local Chat Completions server that
// ignores max tokens (it answers twice the request's max, billing every token). An answer that
// came back without usage, or a stream the mirror cut at its bound, was charged $0 whenever no
// cap was strict: it is charged at its worst case (uncertain), never $0, and one with its usage
// is billed in full.
import { createOpenAI } from '@ai-sdk/openai';
import { generateText, streamText } from 'ai';
import { mirrorAISDK } from '../../../lib/integrations/ai-sdk';
import { startOpenAIChatServer, type OpenAIChatServer } from '../../../examples/servers/openaiChatServer';
import { localPricing as pricing, USD_PER_TOKEN } from '../../helpers/localPricing';

const MAX = 100;
const billedInput = (body: unknown): number => Math.ceil(JSON.stringify(body).length / 4);

let server: OpenAIChatServer;
let withUsage = true;
let billedUsd = 0;
beforeAll(async () => {
  server = await startOpenAIChatServer({
    ignoresMaxTokens: true,
    respond: (body: { max_tokens?: number; max_completion_tokens?: number }) => {
      const output = 2 * (body.max_completion_tokens ?? body.max_tokens ?? MAX);
      billedUsd += (billedInput(body) + output) * USD_PER_TOKEN;
      const usage = withUsage ? { prompt_tokens: billedInput(body), completion_tokens: output } : null;
      return { content: 'tok '.repeat(output), usage, model: 'gpt-local' };
    },
  });
});
afterAll(() => server.close());

type Cap = 'no cap' | 'a plain cap' | 'a strict cap';

describe.each<Cap>(['no cap', 'a plain cap', 'a strict cap'])('mirrorAISDK with %s', (cap) => {
  const mirrored = (usage: boolean) => {
    withUsage = usage;
    billedUsd = 0;
    return mirrorAISDK({
      model: createOpenAI({ apiKey: 'sk-local', baseURL: server.baseURL }).chat('gpt-local'),
      pricing,
      logger: false,
      ...(cap === 'no cap' ? {} : { budget: { maxCostUsd: 1, strict: cap === 'a strict cap' } }),
    });
  };

  it('a streamed answer past its bound is cut there and charged at its worst case: uncertain, never $0', async () => {
    const m = mirrored(true);
    const result = streamText({ ...m.settings, maxOutputTokens: MAX, prompt: 'Say tok, at length' });
    let error: unknown;
    try {
      for await (const part of result.fullStream) if (part.type === 'error') error = part.error;
    } catch (e) {
      error = e;
    }
    expect(String(error)).toMatch(/cut at its bound/);
    expect(billedUsd).toBeGreaterThan(0);
    expect(m.mirror.usage.costUsd).toBeGreaterThanOrEqual(billedUsd);
    expect(m.mirror.usage.uncertainUsd).toBe(m.mirror.usage.costUsd);
  });

  it('an answer sent whole without usage is charged at its worst case: uncertain, never $0', async () => {
    const m = mirrored(false);
    await generateText({ ...m.settings, maxOutputTokens: MAX, prompt: 'Say tok, at length' }).catch(() => undefined);
    expect(billedUsd).toBeGreaterThan(0);
    expect(m.mirror.usage.costUsd).toBeGreaterThanOrEqual(billedUsd);
    expect(m.mirror.usage.uncertainUsd).toBe(m.mirror.usage.costUsd);
  });

  it('an answer sent whole past its bound, with its usage, is billed in full', async () => {
    const m = mirrored(true);
    await generateText({ ...m.settings, maxOutputTokens: MAX, prompt: 'Say tok, at length' }).catch(() => undefined);
    expect(m.mirror.usage.costUsd).toBeCloseTo(billedUsd, 12);
    expect(m.mirror.usage.uncertainUsd).toBe(0);
  });
});
