import OpenAI from 'openai';
import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import { meterFetch, observeLoop } from 'agent-state-machine';
import { chatWire, fromOpenAIChat } from '../../../lib/integrations/openai';
import { createPricing } from '../../../lib/integrations/pricing';
import { recordedFetch } from '../../fixtures/recordedFetch';
import { agentOf } from '../../helpers/sdkLoopTest';

// Chat Completions answers the OpenAI API sent, recorded by PydanticAI for its own tests
// (test/fixtures/openai/NOTICE.md), read by the real `openai` client through a fake `fetch` and
// run through the ready-made loop, streamed and not, under a strict cap. Usage and cost must be
// the recording's, and each charge within the hold taken before its request was sent.

// The list prices of the two models, per million tokens, as the user's table would give them.
const pricing = createPricing({
  prices: {
    'gpt-4.1-mini': { inputPerMTok: 0.4, cachedInputPerMTok: 0.1, outputPerMTok: 1.6 },
    'gpt-4o-mini': { inputPerMTok: 0.15, cachedInputPerMTok: 0.075, outputPerMTok: 0.6 },
    'o3-mini': { inputPerMTok: 1.1, cachedInputPerMTok: 0.55, outputPerMTok: 4.4 },
  },
  catalog: false,
});

type Line = Record<string, unknown>;

function journaled(): { lines: Line[]; sink: { write(): void; journal(j: unknown): void } } {
  const lines: Line[] = [];
  return { lines, sink: { write: () => undefined, journal: (j) => void lines.push(j as Line) } };
}

/** A tool that answers what the recording's second request sent back to the model. */
const toolAnswering = (answer: string, parameter: string) => ({
  description: '',
  parameters: { type: 'object', properties: { [parameter]: { type: 'string' } }, required: [parameter] },
  run: async () => answer,
});

interface Recording {
  files: string[];
  model: string;
  stream: boolean;
  tools: Record<string, ReturnType<typeof toolAnswering>>;
  input: string;
  text: RegExp;
  calls: Array<{ inputTokens: number; outputTokens: number; reasoningTokens?: number }>;
  costUsd: number;
}

const RECORDINGS: Recording[] = [
  {
    // gpt-4.1-mini, sent whole: a tool call (50 in, 15 out), then the answer (75 in, 15 out).
    files: ['pydantic-ai/chat-tool-calls.1.json', 'pydantic-ai/chat-tool-calls.2.json'],
    model: 'gpt-4.1-mini',
    stream: false,
    tools: { get_temperature: toolAnswering('20.0', 'city') },
    input: 'What is the temperature in Tokyo?',
    text: /20\.0 degrees/,
    calls: [
      { inputTokens: 50, outputTokens: 15 },
      { inputTokens: 75, outputTokens: 15 },
    ],
    // (125 × $0.40 + 30 × $1.60) per million.
    costUsd: 0.000098,
  },
  {
    // gpt-4o-mini, streamed with its usage chunk: a tool call (53 in, 15 out), then the answer (78 in, 9 out).
    files: ['pydantic-ai/chat-tool-calls-stream.1.sse', 'pydantic-ai/chat-tool-calls-stream.2.sse'],
    model: 'gpt-4o-mini',
    stream: true,
    tools: { get_capital: toolAnswering('London', 'country') },
    input: 'What is the capital of the UK? Use the tool, then answer.',
    text: /capital of the UK is London/,
    calls: [
      { inputTokens: 53, outputTokens: 15 },
      { inputTokens: 78, outputTokens: 9 },
    ],
    // (131 × $0.15 + 24 × $0.60) per million.
    costUsd: 0.00003405,
  },
  {
    // o3-mini, sent whole: 7 in, 87 out of which 64 were reasoning, under max_completion_tokens 100.
    files: ['pydantic-ai/chat-o3-mini-reasoning.1.json'],
    model: 'o3-mini',
    stream: false,
    tools: {},
    input: 'hello',
    text: /Hello there/,
    calls: [{ inputTokens: 7, outputTokens: 87, reasoningTokens: 64 }],
    // (7 × $1.10 + 87 × $4.40) per million.
    costUsd: 0.0003905,
  },
];

describe('fromOpenAIChat on answers recorded from the API', () => {
  it.each(RECORDINGS)('$files.0: the recorded usage and cost, each call charged within its hold', async (c) => {
    const recorded = recordedFetch('openai', c.files);
    const client = new OpenAI({ apiKey: 'sk-local', fetch: recorded.fetch });
    const loop = fromOpenAIChat(client, { model: c.model, maxTokens: 100, stream: c.stream, tools: c.tools });
    const out = journaled();
    const agent = agentOf(loop, {
      pricing,
      budget: { maxCostUsd: 0.01, strict: true },
      sink: out.sink,
      ledger: true,
    });
    const result = await agent.runTurn(c.input);

    expect(result.outcome).toBe('end_of_turn');
    expect(result.text).toMatch(c.text);
    expect(recorded.requests).toHaveLength(c.files.length);
    const sum = (k: 'inputTokens' | 'outputTokens') => c.calls.reduce((total, u) => total + u[k], 0);
    expect(result.usage).toMatchObject({
      llmCalls: c.files.length,
      inputTokens: sum('inputTokens'),
      outputTokens: sum('outputTokens'),
      uncertainUsd: 0,
      releasedUsd: 0,
    });
    expect(result.usage.costUsd).toBeCloseTo(c.costUsd, 12);
    // Each request held its worst case before it was sent, and its answer was charged within it.
    const reserves = out.lines.filter((l) => l.type === 'reserve');
    const answers = out.lines.filter((l) => l.type === 'llm');
    expect(answers.map((l) => l.usage)).toEqual(c.calls.map((u) => expect.objectContaining(u)));
    expect(reserves).toHaveLength(answers.length);
    answers.forEach((answer, i) => {
      expect(answer.boundExceeded).toBeUndefined();
      expect(answer.costUsd as number).toBeLessThanOrEqual(reserves[i]!.maxCostUsd as number);
    });
    // The request as sent asks for no more than the bound the hold was priced at.
    for (const request of recorded.requests) expect(request).toMatchObject({ max_completion_tokens: 100 });
  });
});

describe('your own loop on the metered fetch, on the same recordings', () => {
  it.each(RECORDINGS)('$files.0: each request charged its recorded usage, within its hold', async (c) => {
    const recorded = recordedFetch('openai', c.files);
    const client = new OpenAI({ apiKey: 'sk-local', fetch: meterFetch([chatWire], recorded.fetch) });
    const out = journaled();
    const { result } = await observeLoop(
      { pricing, budget: { maxCostUsd: 0.01, strict: true }, sink: out.sink, journal: true, logger: false },
      c.input,
      async () => {
        // The loop as its user wrote it: the recording's tools offered, each tool call answered
        // and sent back, each answer read streamed or whole.
        const tools = Object.entries(c.tools).map(([name, t]) => ({
          type: 'function' as const,
          function: { name, description: t.description, parameters: t.parameters },
        }));
        const messages: ChatCompletionMessageParam[] = [{ role: 'user', content: c.input }];
        let text = '';
        for (let call = 0; call < c.files.length; call++) {
          const request = { model: c.model, messages, max_completion_tokens: 100, ...(tools.length > 0 && { tools }) };
          const asked: Array<{ id: string; name: string; arguments: string }> = [];
          if (!c.stream) {
            const message = (await client.chat.completions.create(request)).choices[0]!.message;
            text = message.content ?? '';
            for (const t of message.tool_calls ?? [])
              if (t.type === 'function')
                asked.push({ id: t.id, name: t.function.name, arguments: t.function.arguments });
          } else {
            const chunks = await client.chat.completions.create({
              ...request,
              stream: true,
              stream_options: { include_usage: true },
            });
            text = '';
            for await (const chunk of chunks) {
              const delta = chunk.choices[0]?.delta;
              text += delta?.content ?? '';
              for (const part of delta?.tool_calls ?? []) {
                const slot = (asked[part.index] ??= { id: '', name: '', arguments: '' });
                slot.id ||= part.id ?? '';
                slot.name += part.function?.name ?? '';
                slot.arguments += part.function?.arguments ?? '';
              }
            }
          }
          if (asked.length === 0) continue;
          messages.push({
            role: 'assistant',
            content: null,
            tool_calls: asked.map((t) => ({
              id: t.id,
              type: 'function' as const,
              function: { name: t.name, arguments: t.arguments },
            })),
          });
          for (const t of asked)
            messages.push({ role: 'tool', tool_call_id: t.id, content: await c.tools[t.name]!.run() });
        }
        return text;
      },
    );
    expect(result.text).toMatch(c.text);
    expect(result.usage).toMatchObject({ llmCalls: c.files.length, uncertainUsd: 0, releasedUsd: 0 });
    expect(result.usage.costUsd).toBeCloseTo(c.costUsd, 12);
    const reserves = out.lines.filter((l) => l.type === 'reserve');
    const answers = out.lines.filter((l) => l.type === 'llm');
    // The second request sent back the tool's answer, as the recording's did.
    if (c.files.length > 1)
      expect(recorded.requests[1]!.messages).toEqual([
        expect.objectContaining({ role: 'user' }),
        expect.objectContaining({ role: 'assistant' }),
        expect.objectContaining({ role: 'tool' }),
      ]);
    expect(answers.map((l) => (l.response as { usage?: unknown }).usage)).toEqual(
      c.calls.map((u) => expect.objectContaining(u)),
    );
    answers.forEach((answer, i) =>
      expect(answer.costUsd as number).toBeLessThanOrEqual(reserves[i]!.maxCostUsd as number),
    );
  });
});
