// The requests the Agents SDK's OpenAIProvider makes on its own: its `openai` client retries
// (twice by default) where a wrapped Model sees one call. Against a server that bills every
// request it takes in full (nothing for a 429), each request the SDK sends must be gated and
// charged by the mirror: a strict cap is never passed, and billed + uncertain covers the bill.
import { Agent, OpenAIProvider, setTracingDisabled } from '@openai/agents';
import { BudgetExceededError } from 'agent-state-machine';
import { agentsMirror } from '../../../lib/integrations/openai-agents';
import { startBillingServer, type BillingServer, type Move } from '../../helpers/billingServer';
import { localPricing as pricing } from '../../helpers/localPricing';
import { startOpenAIResponsesServer, type ResponsesAction } from '../../../examples/servers/openaiResponsesServer';

setTracingDisabled(true);

let billing: BillingServer;
beforeAll(async () => {
  billing = await startBillingServer(5_000);
});
afterAll(() => billing.server.close());

/** Two runs of one model call each, on a provider whose client keeps its default retries. */
async function twoCalls(moves: Move[], budget: { maxCostUsd: number; strict: boolean }, stream = false) {
  billing.reset(moves);
  const before = billing.server.exchanges.length;
  // The provider's own client, at its defaults (maxRetries 2).
  const provider = new OpenAIProvider({ apiKey: 'sk-local', baseURL: billing.server.baseURL, useResponses: false });
  const sm = agentsMirror({ modelProvider: provider, pricing, budget, logger: false });
  const agent = new Agent({ name: 'helper', model: 'gpt-local', modelSettings: { maxTokens: 400 } });
  const outcomes: unknown[] = [];
  for (let i = 0; i < 2; i++)
    outcomes.push(
      await (
        stream
          ? sm.run(agent, 'Say done', { stream: true }).then(async (r) => {
              await r.completed;
              // The mirror hears the end on the stream's completion, a microtask later.
              await new Promise((resolve) => setImmediate(resolve));
              return r.error ?? r.finalOutput;
            })
          : sm.run(agent, 'Say done').then((r) => r.finalOutput)
      ).catch((e: unknown) => e),
    );
  return { sm, outcomes, requests: billing.server.exchanges.length - before };
}

describe("AgentsMirror and the OpenAIProvider client's own retries", () => {
  it('the issue: 500, 500, ok per call under a strict $0.01 cap — every request gated, the bill within the cap', async () => {
    const { sm, outcomes, requests } = await twoCalls(['500', '500', 'ok'], { maxCostUsd: 0.01, strict: true });
    const billed = billing.billing.usd;
    process.stdout.write(
      `issue case: ${requests} requests, $${billed.toFixed(4)} billed; reported $${sm.usage.costUsd.toFixed(4)} (uncertain $${sm.usage.uncertainUsd.toFixed(4)})\n`,
    );
    // A retry whose hold did not fit beside the two 500s' holds was refused before it was sent.
    expect(outcomes[0]).toBeInstanceOf(BudgetExceededError);
    expect(requests).toBe(2);
    // Today: 6 requests for 2 calls, $0.0130 billed against $0.01, $0.0044 reported.
    expect(billed).toBeLessThanOrEqual(0.01 + 1e-12);
    // Each request the server took was an attempt the mirror held and charged.
    expect(sm.usage.llmCalls).toBe(requests);
    expect(sm.usage.costUsd).toBeGreaterThanOrEqual(billed - 1e-9);
    // The 500s came after the work: uncertain, at their holds.
    expect(sm.usage.uncertainUsd).toBeGreaterThan(0);
    expect(billing.server.rejected).toEqual([]);
  }, 60_000);

  it.each([false, true])(
    '500 then ok (streamed: %s): two requests gated, the 500 charged at its hold as uncertain',
    async (stream) => {
      const { sm, outcomes, requests } = await twoCalls(['500', 'ok'], { maxCostUsd: 1, strict: true }, stream);
      expect(outcomes).toEqual(['done', 'done']);
      expect(requests).toBe(4);
      expect(sm.usage.llmCalls).toBe(4);
      const billed = billing.billing.usd;
      expect(sm.usage.uncertainUsd).toBeGreaterThan(0);
      expect(sm.usage.costUsd).toBeGreaterThanOrEqual(billed - 1e-9);
      // What the answers reported is billed: the rest (the 500s, billed by the server) is uncertain.
      expect(sm.usage.costUsd - sm.usage.uncertainUsd).toBeLessThanOrEqual(billed + 1e-9);
    },
    60_000,
  );

  it('429 then ok: the 429s released (not billed), billed equals the bill', async () => {
    const { sm, outcomes, requests } = await twoCalls(['429', 'ok'], { maxCostUsd: 1, strict: true });
    expect(outcomes).toEqual(['done', 'done']);
    expect(requests).toBe(4);
    expect(sm.usage.llmCalls).toBe(4);
    expect(sm.usage.uncertainUsd).toBe(0);
    expect(sm.usage.releasedUsd).toBeGreaterThan(0);
    expect(sm.usage.costUsd).toBeCloseTo(billing.billing.usd, 9);
  }, 60_000);

  it.each([false, true])(
    'an answer without usage (streamed: %s) is uncertain at its hold, never $0: the strict cap holds',
    async (stream) => {
      // The issue: $0.0137–0.0158 billed against a strict $0.01 cap, $0 reported.
      const { sm, outcomes, requests } = await twoCalls(['noUsage'], { maxCostUsd: 0.01, strict: true }, stream);
      const billed = billing.billing.usd;
      expect(billed).toBeGreaterThan(0);
      expect(billed).toBeLessThanOrEqual(0.01 + 1e-12);
      expect(sm.usage.llmCalls).toBe(requests);
      // Nothing was reported, so nothing is billed by the report; all of it is held as uncertain, covering the bill.
      expect(sm.usage.costUsd).toBeGreaterThanOrEqual(billed - 1e-9);
      expect(sm.usage.uncertainUsd).toBeCloseTo(sm.usage.costUsd, 9);
      expect(sm.usage.inputTokens).toBe(0);
      // A call whose hold no longer fits beside the uncertain ones is refused before it is sent.
      expect(
        outcomes.filter((o) => o === 'done').length + outcomes.filter((o) => o instanceof BudgetExceededError).length,
      ).toBe(2);
      expect(billing.server.rejected).toEqual([]);
    },
    60_000,
  );

  it('the Responses model too: a 500, then a 429, then ok is three attempts; a 400 is not retried', async () => {
    const statuses = [500, 429];
    const server = await startOpenAIResponsesServer({
      respond: (body: { input: { content?: unknown }[] }, index): ResponsesAction => {
        if (JSON.stringify(body.input).includes('invalid')) return { error: { status: 400, message: 'invalid' } };
        return index < statuses.length
          ? { error: { status: statuses[index]!, message: 'failed' } }
          : { text: 'done', usage: { input_tokens: 10, output_tokens: 5 } };
      },
    });
    try {
      const provider = new OpenAIProvider({ apiKey: 'sk-local', baseURL: server.baseURL, useResponses: true });
      const sm = agentsMirror({
        modelProvider: provider,
        pricing: () => 0.001,
        budget: { maxCostUsd: 1, strict: true },
        logger: false,
      });
      const agent = new Agent({ name: 'helper', model: 'gpt-local', modelSettings: { maxTokens: 100 } });
      expect((await sm.run(agent, 'Say done')).finalOutput).toBe('done');
      expect(server.exchanges.length).toBe(3);
      expect(sm.usage.llmCalls).toBe(3);
      expect(sm.usage.uncertainUsd).toBeGreaterThan(0);
      expect(sm.usage.releasedUsd).toBeGreaterThan(0);
      const error = await sm.run(agent, 'invalid').catch((e: unknown) => e);
      expect((error as { status?: number }).status).toBe(400);
      expect(server.exchanges.length).toBe(4);
    } finally {
      await server.close();
    }
  }, 60_000);
});
