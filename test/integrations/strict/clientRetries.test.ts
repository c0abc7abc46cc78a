import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { AgentWithStateMachine, type AgentLoop, type Pricing } from 'agent-state-machine';
import { fromOpenAIChat, fromOpenAIResponses } from '../../../lib/integrations/openai';
import { fromAnthropic } from '../../../lib/integrations/anthropic';
import { startBillingServer, type BillingServer } from '../../helpers/billingServer';
import { localPricing } from '../../helpers/localPricing';
import { startOpenAIResponsesServer, type ResponsesAction } from '../../../examples/servers/openaiResponsesServer';
import { startAnthropicMessagesServer, type MessagesAction } from '../../../examples/servers/anthropicMessagesServer';

// The ready-made loops given each SDK's real client at its defaults (maxRetries 2, which retries
// 429s and 5xx where the library would not see it): the loops send every request with the
// client's retries off, so that each request is an attempt of the adapter — gated against the
// cap before it is sent and charged by the rule (a 500 uncertain at its hold, a 429 released).

const pricing: Pricing = (u) => ((u.inputTokens ?? 0) + (u.outputTokens ?? 0)) * 5e-6;

/** A turn of `loop` under a strict cap, the adapter retrying (at once) what failed. */
async function turn(loop: AgentLoop) {
  const agent = new AgentWithStateMachine(loop, {
    logger: false,
    pricing,
    budget: { maxCostUsd: 1, strict: true },
    retry: { retries: 2, shouldRetry: () => true },
    sleep: async () => undefined,
  });
  const result = await agent.runTurn('Say done');
  return { result, usage: agent.usage };
}

describe("the ready-made loops and their client's own retries", () => {
  let billing: BillingServer;
  beforeAll(async () => {
    billing = await startBillingServer(5_000);
  });
  afterAll(() => billing.server.close());

  it.each([
    { first: '500' as const, stream: false },
    { first: '429' as const, stream: false },
    { first: '500' as const, stream: true },
    { first: '429' as const, stream: true },
  ])(
    'fromOpenAIChat, a default openai client: $first then ok (streamed: $stream) is two attempts, each gated and charged',
    async ({ first, stream }) => {
      billing.reset([first, 'ok']);
      const before = billing.server.exchanges.length;
      const client = new OpenAI({ apiKey: 'sk-local', baseURL: billing.server.baseURL });
      const loop = fromOpenAIChat(client, { model: 'gpt-local', maxTokens: 300, stream });
      const agent = new AgentWithStateMachine(loop, {
        logger: false,
        pricing: localPricing,
        budget: { maxCostUsd: 1, strict: true },
        retry: { retries: 2, shouldRetry: () => true },
        sleep: async () => undefined,
      });
      const result = await agent.runTurn('Say done');
      expect(result.outcome).toBe('end_of_turn');
      expect(billing.server.exchanges.length - before).toBe(2);
      expect(agent.usage.llmCalls).toBe(2);
      const billed = billing.billing.usd;
      expect(agent.usage.costUsd).toBeGreaterThanOrEqual(billed - 1e-9);
      if (first === '500') expect(agent.usage.uncertainUsd).toBeGreaterThan(0);
      else {
        expect(agent.usage.uncertainUsd).toBe(0);
        expect(agent.usage.releasedUsd).toBeGreaterThan(0);
        expect(agent.usage.costUsd).toBeCloseTo(billed, 9);
      }
    },
  );

  it.each([500, 429])('fromOpenAIResponses, a default openai client: %s then ok is two attempts', async (status) => {
    const server = await startOpenAIResponsesServer({
      respond: (_body, index): ResponsesAction =>
        index === 0
          ? { error: { status, message: 'failed' } }
          : { text: 'done', usage: { input_tokens: 10, output_tokens: 5 } },
    });
    try {
      const client = new OpenAI({ apiKey: 'sk-local', baseURL: server.baseURL });
      const { result, usage } = await turn(fromOpenAIResponses(client, { model: 'gpt-local', maxTokens: 300 }));
      expect(result.outcome).toBe('end_of_turn');
      expect(server.exchanges.length).toBe(2);
      expect(usage.llmCalls).toBe(2);
      if (status === 500) expect(usage.uncertainUsd).toBeGreaterThan(0);
      else expect([usage.uncertainUsd, usage.releasedUsd > 0]).toEqual([0, true]);
    } finally {
      await server.close();
    }
  });

  it.each([
    { status: 500, type: 'api_error' },
    { status: 529, type: 'overloaded_error' },
    { status: 429, type: 'rate_limit_error' },
  ])('fromAnthropic, a default Anthropic client: $status then ok is two attempts', async ({ status, type }) => {
    const server = await startAnthropicMessagesServer({
      respond: (_body, index): MessagesAction =>
        index === 0
          ? { error: { status, type, message: 'failed' } }
          : { text: 'done', usage: { input_tokens: 10, output_tokens: 5 } },
    });
    try {
      const client = new Anthropic({ apiKey: 'sk-local', baseURL: server.baseURL });
      const { result, usage } = await turn(fromAnthropic(client, { model: 'claude-local', maxTokens: 300 }));
      expect(result.outcome).toBe('end_of_turn');
      expect(server.exchanges.length).toBe(2);
      expect(usage.llmCalls).toBe(2);
      if (status === 500) expect(usage.uncertainUsd).toBeGreaterThan(0);
      else expect([usage.uncertainUsd, usage.releasedUsd > 0]).toEqual([0, true]);
    } finally {
      await server.close();
    }
  });
});
