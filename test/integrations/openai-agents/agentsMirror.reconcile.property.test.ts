// The reconciliation property on the Agents SDK mirror, in runBatch of framework tasks: the
// SDK's OpenAIProvider on its Chat Completions model, its `openai` client retrying once on its
// own, against a server that bills what the provider would (every request it takes, in full;
// nothing for a 429), each reply chosen by fast-check (as test/integrations/strict/
// reconcileMirrors.property.test.ts does for the AI SDK and LangGraph mirrors).
// - Strict, with replies that come after the client gave up: the server billed no more than the
//   cap (but for the documented overshoot of answers past their max tokens sent whole), no more
//   than the report's billed + uncertain, and the report's billed is no more than the bill.
// - On time: the report's billed is, to the cent, what the server billed for the answers it sent
//   whole with their usage. A stream cut after its usage chunk is left out: the SDK fails the
//   call without the usage it read, so the mirror holds it uncertain.
import { Agent, OpenAIProvider, setTracingDisabled } from '@openai/agents';
import fc from 'fast-check';
import OpenAI from 'openai';
import { runBatch, type BatchReport } from 'agent-state-machine';
import { AgentsMirror } from '../../../lib/integrations/openai-agents';
import {
  billingScripts,
  onTimeScripts,
  startBillingServer,
  type BillingServer,
  type Script,
} from '../../helpers/billingServer';
import { localPricing as pricing } from '../../helpers/localPricing';
import { expectBilledAsAnswered, expectReconciled, expectStormCompleted } from '../../helpers/reconciliation';

setTracingDisabled(true);

type ProviderClient = NonNullable<NonNullable<ConstructorParameters<typeof OpenAIProvider>[0]>['openAIClient']>;

const MAX_OUTPUT = 2000;
// Short for the late answers, long enough that a loaded machine reads the others in time.
const TIMEOUT_MS = 500;
const CAP = 0.1;

let billing: BillingServer;
beforeAll(async () => {
  billing = await startBillingServer(10 * TIMEOUT_MS);
});
afterAll(() => billing.server.close());

async function batch({ moves, stream }: Script, cap: number, tasks: number, timeoutMs?: number): Promise<BatchReport> {
  billing.reset(moves);
  const report = await runBatch(
    Array.from({ length: tasks }, (_, i) => ({
      id: `t${i}`,
      input: 'Say done',
      drive: async (mirror) => {
        const client = new OpenAI({
          apiKey: 'sk-local',
          baseURL: billing.server.baseURL,
          maxRetries: 1,
          ...(timeoutMs === undefined ? {} : { timeout: timeoutMs }),
        });
        // The SDK types its client with the copy of `openai` it bundles; the API is the same.
        const openAIClient = client as unknown as ProviderClient;
        const provider = new OpenAIProvider({ openAIClient, useResponses: false });
        const agent = new Agent({ name: 'helper', model: 'gpt-local', modelSettings: { maxTokens: MAX_OUTPUT } });
        const sm = new AgentsMirror({ mirror, modelProvider: provider });
        if (!stream) return (await sm.run(agent, 'Say done')).finalOutput;
        const run = await sm.run(agent, 'Say done', { stream: true });
        await run.completed;
        if (run.error) throw run.error;
        return run.finalOutput;
      },
    })),
    { logger: false, concurrency: 4, pricing, total: { maxCostUsd: cap, strict: true } },
  );
  expect(billing.server.rejected).toEqual([]);
  return report;
}

describe('AgentsMirror (OpenAIProvider) in runBatch against an adversarial billing server', () => {
  it('strict: the cap holds, billed ≤ reported billed + uncertain, and reported billed ≤ billed', async () => {
    await fc.assert(
      fc.asyncProperty(billingScripts(8), async (script) => {
        // 12 tasks of about $0.0101 each: the cap binds.
        const report = await batch(script, CAP, 12, TIMEOUT_MS);
        expectReconciled(report, billing.billing, CAP);
      }),
      { numRuns: 6, seed: 20261204 },
    );
  }, 240_000);

  it('on time: reported billed = what the server billed for the answers it sent whole', async () => {
    await fc.assert(
      fc.asyncProperty(onTimeScripts(8, ['cutAfterUsage']), async (script) => {
        const report = await batch(script, 10, 8);
        expectBilledAsAnswered(report, billing.billing);
      }),
      { numRuns: 6, seed: 20261204 },
    );
  }, 240_000);

  it('a 429 storm (half the requests refused, none billed): a strict batch completes what the cap allows', async () => {
    // An answer bills about $0.0101 (2,000 output tokens and the input at $5 per million): 9 fit in $0.10.
    const report = await batch({ moves: ['429', 'ok'], stream: false }, CAP, 12);
    expectStormCompleted(report, billing.billing.usd, CAP);
  }, 120_000);
});
