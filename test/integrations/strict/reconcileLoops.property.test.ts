import Anthropic from '@anthropic-ai/sdk';
import fc from 'fast-check';
import OpenAI from 'openai';
import { runBatch, type AgentLoop } from 'agent-state-machine';
import { fromAnthropic } from '../../../lib/integrations/anthropic';
import { fromOpenAIResponses } from '../../../lib/integrations/openai';
import {
  billingScripts,
  startBillingServer,
  unreadOvershootUsd,
  type BillingServer,
  type Protocol,
  type Script,
} from '../../helpers/billingServer';
import { localPricing as pricing } from '../../helpers/localPricing';

// The reconciliation property on the ready-made loops of the other two wires (Chat Completions'
// is test/integrations/strict/chargedAtHold.test.ts): the real SDK client against a billing
// server that bills what the provider would (every request it takes, in full; nothing for a
// 429), each reply chosen by fast-check, in a strict batch. For every batch: the server billed
// no more than the cap (but for the documented overshoot of answers past their max tokens sent
// whole); no more than the report's billed + uncertain; and the report's billed is no more than
// it billed.

const MAX_OUTPUT = 2000;
// Short for the late answers, long enough that a loaded machine reads the others in time.
const TIMEOUT_MS = 500;
const IN_FLIGHT = 4;
const CAP = 0.1;

function loopOn(protocol: Exclude<Protocol, 'chat'>, baseURL: string, stream: boolean): AgentLoop {
  if (protocol === 'responses')
    return fromOpenAIResponses(new OpenAI({ apiKey: 'sk-local', baseURL, timeout: TIMEOUT_MS }), {
      model: 'gpt-local',
      maxTokens: MAX_OUTPUT,
      stream,
    });
  return fromAnthropic(new Anthropic({ apiKey: 'sk-ant-local', baseURL, timeout: TIMEOUT_MS }), {
    model: 'gpt-local',
    maxTokens: MAX_OUTPUT,
    stream,
  });
}

/** A batch of 12 tasks against the server, each reply chosen by `moves`; the cap strict or not. */
async function batchAgainst(
  billing: BillingServer,
  protocol: Exclude<Protocol, 'chat'>,
  { moves, stream }: Script,
  strict: boolean,
) {
  billing.reset(moves);
  const report = await runBatch(
    Array.from({ length: 12 }, (_, i) => ({
      id: `t${i}`,
      input: 'Say done',
      agent: () => loopOn(protocol, billing.server.baseURL, stream),
    })),
    {
      logger: false,
      concurrency: IN_FLIGHT,
      pricing,
      total: { maxCostUsd: CAP, strict },
      retry: { retries: 2, shouldRetry: () => true },
      sleep: async () => undefined,
    },
  );
  expect(billing.server.rejected).toEqual([]);
  return report;
}

describe.each(['responses', 'anthropic'] as const)(
  '%s: an adversarial billing server choosing each reply',
  (protocol) => {
    let billing: BillingServer;
    beforeAll(async () => {
      billing = await startBillingServer(10 * TIMEOUT_MS, protocol);
    });
    afterAll(() => billing.server.close());

    it('the cap holds, billed ≤ reported billed + uncertain, and reported billed ≤ billed', async () => {
      await fc.assert(
        fc.asyncProperty(billingScripts(10), async (script) => {
          const report = await batchAgainst(billing, protocol, script, true);
          const { usd, overshotUsd } = billing.billing;
          const { costUsd, uncertainUsd } = report.totals;
          // The cap, but for answers past their bound sent whole, at most one a run in flight.
          expect(usd - overshotUsd).toBeLessThanOrEqual(CAP + 1e-12);
          // Every dollar billed is in the report, billed or uncertain (but an overshoot no run read).
          expect(costUsd).toBeGreaterThanOrEqual(usd - unreadOvershootUsd(billing.billing, report.runs) - 1e-9);
          // Nothing is called billed that was not.
          expect(costUsd - (uncertainUsd ?? 0)).toBeLessThanOrEqual(usd + 1e-9);
        }),
        { numRuns: 8, seed: 20261204 },
      );
    }, 180_000);

    it('bites: with strict: false, fast-check finds a server that bills past the cap', async () => {
      // What the batch that failed the property billed: it failed by billing past the cap, not by throwing.
      let billedPast = 0;
      const found = await fc.check(
        fc.asyncProperty(billingScripts(10), async (script) => {
          await batchAgainst(billing, protocol, script, false);
          if (billing.billing.usd <= CAP + 1e-12) return true;
          billedPast = billing.billing.usd;
          return false;
        }),
        { numRuns: 8, seed: 20261204, endOnFailure: true },
      );
      expect(found.failed).toBe(true);
      expect(billedPast).toBeGreaterThan(CAP);
    }, 180_000);
  },
);
