// The metered fetch on other clients than `openai`'s own, each at its default retries: the AI
// SDK's OpenAI provider (generateText runs the tool loop; its tools mark themselves with
// observeTool) and LangChain's ChatOpenAI (whose AsyncCaller retries inside the model). Every
// request the client sends, each retry included, is an attempt of the run: the server's count
// equals the run's, a 429 is released, and what the server billed is what the run reports billed.
import { ChatOpenAI } from '@langchain/openai';
import { createOpenAI } from '@ai-sdk/openai';
import { generateText, jsonSchema, stepCountIs, tool } from 'ai';
import { observeLoop, observeTool } from 'agent-state-machine';
import { meteredFetch } from '../../lib/integrations/openai';
import { startOpenAIChatServer, type ChatAction, type OpenAIChatServer } from '../../examples/servers/openaiChatServer';
import { localPricing, USD_PER_TOKEN } from '../helpers/localPricing';

let server: OpenAIChatServer;
let script: ChatAction[];
let billedUsd = 0;
beforeEach(async () => {
  billedUsd = 0;
  server = await startOpenAIChatServer({
    respond(body: unknown, index) {
      const action = script[index] ?? { content: 'done' };
      if ('error' in action) return action;
      const usage = { prompt_tokens: Math.ceil(JSON.stringify(body).length / 4), completion_tokens: 7 };
      billedUsd += (usage.prompt_tokens + usage.completion_tokens) * USD_PER_TOKEN;
      return { ...action, usage };
    },
  });
});
afterEach(() => server.close());

const RATE_LIMITED: ChatAction = {
  error: {
    status: 429,
    message: 'Rate limit reached',
    type: 'requests',
    headers: { 'retry-after-ms': '5', 'retry-after': '0' },
  },
};

it("the AI SDK's provider: generateText's tool loop and its own retry of a 429", async () => {
  script = [
    RATE_LIMITED,
    { content: '', toolCalls: [{ name: 'lookup', arguments: '{"q":"a"}' }] },
    { content: 'Found it.' },
  ];
  const provider = createOpenAI({ baseURL: server.baseURL, apiKey: 'sk-local', fetch: meteredFetch });
  const lookup = tool({
    inputSchema: jsonSchema<{ q: string }>({ type: 'object', properties: { q: { type: 'string' } }, required: ['q'] }),
    execute: (input, { toolCallId }) => observeTool({ id: toolCallId, name: 'lookup', input }, async () => 'found'),
  });
  const { result, value } = await observeLoop(
    { budget: { maxCostUsd: 1 }, pricing: localPricing, logger: false },
    'find a',
    async () =>
      (
        await generateText({
          model: provider.chat('gpt-local'),
          prompt: 'find a',
          tools: { lookup },
          stopWhen: stepCountIs(4),
          maxOutputTokens: 50,
        })
      ).text,
  );
  expect(value).toBe('Found it.');
  expect(result.outcome).toBe('end_of_turn');
  expect(server.exchanges).toHaveLength(3);
  expect(result.usage).toMatchObject({ llmCalls: 3, toolCalls: 1, uncertainUsd: 0 });
  expect(result.usage.releasedUsd).toBeGreaterThan(0);
  expect(result.usage.costUsd).toBeCloseTo(billedUsd, 12);
});

it("LangChain's ChatOpenAI: its AsyncCaller's retries of a 500, each one an attempt", async () => {
  script = [
    { error: { status: 500, message: 'The server had an error', type: 'server_error' } },
    { content: 'Hello.' },
  ];
  const model = new ChatOpenAI({
    model: 'gpt-local',
    apiKey: 'sk-local',
    maxTokens: 50,
    configuration: { baseURL: server.baseURL, fetch: meteredFetch },
  });
  const { result, value } = await observeLoop(
    { budget: { maxCostUsd: 1 }, pricing: localPricing, logger: false },
    'hi',
    async () => {
      const answer = await model.invoke('hi');
      return String(answer.content);
    },
  );
  expect(value).toBe('Hello.');
  expect(result.outcome).toBe('end_of_turn');
  expect(server.exchanges).toHaveLength(2);
  expect(result.usage.llmCalls).toBe(2);
  // The 500 came after the work: it may have been billed, so it is held as uncertain; the answer is billed.
  expect(result.usage.uncertainUsd).toBeGreaterThan(0);
  expect(result.usage.costUsd - result.usage.uncertainUsd).toBeCloseTo(billedUsd, 12);
}, 30_000);
