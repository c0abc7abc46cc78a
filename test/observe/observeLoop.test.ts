// Your own loop on the real `openai` client, at its default settings (two retries of its own),
// observed through `meteredFetch` and `observeTool` against the local Chat Completions server:
// every HTTP request the client makes is an attempt of the run, gated, charged and journaled.
import OpenAI from 'openai';
import { observeLoop, observeTool, type JournalLine } from 'agent-state-machine';
import { meteredFetch } from '../../lib/integrations/openai';
import { startOpenAIChatServer, type ChatAction, type OpenAIChatServer } from '../../examples/servers/openaiChatServer';
import { localPricing, USD_PER_TOKEN } from '../helpers/localPricing';
import { journalInto } from '../helpers/journalInto';

type Message = OpenAI.Chat.ChatCompletionMessageParam;
const TOOLS: OpenAI.Chat.ChatCompletionTool[] = [
  {
    type: 'function',
    function: { name: 'lookup', parameters: { type: 'object', properties: { q: { type: 'string' } } } },
  },
];

/** The user's loop, as written before the library: only the two marked lines know of it. */
async function agent(client: OpenAI, task: string, maxTokens = 50): Promise<string> {
  const messages: Message[] = [{ role: 'user', content: task }];
  for (;;) {
    const completion = await client.chat.completions.create({
      model: 'gpt-local',
      messages,
      tools: TOOLS,
      max_completion_tokens: maxTokens,
    });
    const message = completion.choices[0]!.message;
    messages.push(message);
    if (!message.tool_calls?.length) return message.content ?? '';
    for (const call of message.tool_calls) {
      if (call.type !== 'function') continue;
      const output = await observeTool(
        { id: call.id, name: call.function.name, input: call.function.arguments },
        async () => `result of ${call.function.arguments}`,
      );
      messages.push({ role: 'tool', tool_call_id: call.id, content: output });
    }
  }
}

let server: OpenAIChatServer;
let script: ChatAction[];
const billed = { usd: 0 };
beforeEach(async () => {
  billed.usd = 0;
  server = await startOpenAIChatServer({
    respond(body: { messages: { role: string }[]; max_completion_tokens: number }, index) {
      const action = script[index] ?? { content: 'done' };
      if ('error' in action) return action;
      const usage = {
        prompt_tokens: Math.ceil(JSON.stringify(body).length / 4),
        completion_tokens: body.max_completion_tokens,
      };
      billed.usd += (usage.prompt_tokens + usage.completion_tokens) * USD_PER_TOKEN;
      return { ...action, usage };
    },
  });
});
afterEach(() => server.close());

function client(): OpenAI {
  // Default retries (2) and timeouts: the client as users make it, but for its endpoint and the fetch.
  return new OpenAI({ baseURL: server.baseURL, apiKey: 'sk-local', fetch: meteredFetch });
}

it('runs the loop as it is, charging each request the client sends, its own retries included', async () => {
  script = [
    { error: { status: 500, message: 'The server had an error', type: 'server_error' } },
    { content: 'Let me look.', toolCalls: [{ name: 'lookup', arguments: '{"q":"a"}' }] },
    { error: { status: 429, message: 'Rate limit reached', type: 'requests' } },
    { content: 'Found it.' },
  ];
  const lines: JournalLine[] = [];
  const { result, value } = await observeLoop(
    { budget: { maxCostUsd: 1 }, pricing: localPricing, journal: true, logger: false, ...journalInto(lines) },
    'find a',
    () => agent(client(), 'find a'),
  );
  expect(value).toBe('Found it.');
  expect(result.outcome).toBe('end_of_turn');
  expect(server.exchanges).toHaveLength(4);
  // Four attempts: the 500 may have been billed (uncertain, at its worst case), the 429 was not (released).
  const attempts = lines.filter((l) => (l as { type: string }).type === 'llm') as unknown as Record<string, unknown>[];
  expect(attempts).toHaveLength(4);
  expect(attempts[0]).toMatchObject({ error: { status: 500 }, chargedAtHold: expect.any(String) });
  expect(attempts[2]).toMatchObject({ error: { status: 429 }, released: expect.any(String) });
  expect(result.usage.llmCalls).toBe(4);
  expect(result.usage.toolCalls).toBe(1);
  // Billed: what the server billed for the two answers; uncertain: the 500's hold.
  expect(result.usage.costUsd - result.usage.uncertainUsd).toBeCloseTo(billed.usd, 10);
  expect(result.usage.uncertainUsd).toBeGreaterThan(0);
  expect(result.usage.releasedUsd).toBeGreaterThan(0);
});

it('refuses a request that does not fit a strict cap before it is sent, and the run ends budget_exceeded', async () => {
  script = [{ content: 'Let me look.', toolCalls: [{ name: 'lookup', arguments: '{"q":"a"}' }] }];
  const { result, value } = await observeLoop(
    { budget: { maxCostUsd: 0.008 }, pricing: localPricing, logger: false },
    'find a',
    () => agent(client(), 'find a', 500),
  );
  expect(value).toBeUndefined();
  expect(result.outcome).toBe('budget_exceeded');
  // The first call fit ($0.0025 held at most at 500 output tokens), the second did not: never sent.
  expect(server.exchanges).toHaveLength(1);
  expect(billed.usd).toBeLessThanOrEqual(0.008);
});

it('refuses a request with no max tokens under a strict cap, naming what to set', async () => {
  script = [];
  const { result } = await observeLoop({ budget: { maxCostUsd: 1 }, pricing: localPricing, logger: false }, 'hi', () =>
    client().chat.completions.create({ model: 'gpt-local', messages: [{ role: 'user', content: 'hi' }] }),
  );
  expect(result.outcome).toBe('error');
  expect(result.error?.message).toMatch(/max_completion_tokens \(or max_tokens\)/);
  expect(server.exchanges).toHaveLength(0);
});

it('leaves a client outside an observed run alone', async () => {
  script = [{ content: 'plain' }];
  const completion = await client().chat.completions.create({
    model: 'gpt-local',
    messages: [{ role: 'user', content: 'hi' }],
  });
  expect(completion.choices[0]!.message.content).toBe('plain');
});

it('refuses a second model call of the same run while the first is unanswered, by name', async () => {
  script = [{ content: 'one', delayMs: 200 }, { content: 'two' }];
  const ask = (c: OpenAI) =>
    c.chat.completions.create({
      model: 'gpt-local',
      messages: [{ role: 'user', content: 'hi' }],
      max_completion_tokens: 10,
    });
  const { result } = await observeLoop({ logger: false }, 'hi', async () => {
    const c = client();
    await Promise.all([ask(c), ask(c)]);
  });
  expect(result.outcome).toBe('error');
  expect(result.error?.message).toMatch(/one model call at a time/);
  // Neither was sent once the run had ended: no request past the refusal.
  expect(server.exchanges.length).toBeLessThanOrEqual(1);
  expect(result.usage.llmCalls).toBe(server.exchanges.length);
});
