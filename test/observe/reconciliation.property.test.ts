// The reconciliation property on the observed path: your own loop on the real `openai` client,
// at its default retries, metered at the wire, in a strict batch against a billing server that
// bills what a provider would (every request it takes, in full, whether or not the client sees
// the answer; nothing for a 429), each reply chosen by fast-check. For every batch: the server
// billed no more than the cap (but for the documented overshoot of answers past their max
// tokens sent whole); it billed no more than the report's billed + uncertain; and the report's
// billed is no more than it billed (nothing is billed that was not).
import fc from 'fast-check';
import OpenAI from 'openai';
import { observeTask, runBatch, type BatchReport } from 'agent-state-machine';
import { meteredFetch } from '../../lib/integrations/openai';
import { billingScripts, startBillingServer, type Script } from '../helpers/billingServer';
import { localPricing as pricing } from '../helpers/localPricing';
import { sayDone } from '../helpers/reconciliation';

const MAX_OUTPUT = 2000;
// Short for the late answers, long enough that a loaded machine reads the others in time.
const TIMEOUT_MS = 500;
const IN_FLIGHT = 4;
const CAP = 0.1;

async function batchAgainst(
  { moves, stream }: Script,
  tasks: number,
): Promise<{ report: BatchReport; billedUsd: number; overshotUsd: number }> {
  const billing = await startBillingServer(10 * TIMEOUT_MS);
  billing.reset(moves);
  try {
    // The client as users make it (its own two retries), with a short timeout for the late answers.
    const client = new OpenAI({
      apiKey: 'sk-local',
      baseURL: billing.server.baseURL,
      timeout: TIMEOUT_MS,
      fetch: meteredFetch,
    });
    const report = await runBatch(
      Array.from({ length: tasks }, (_, i) =>
        observeTask(`t${i}`, 'Say done', () => sayDone(client, stream, MAX_OUTPUT)),
      ),
      { logger: false, concurrency: IN_FLIGHT, pricing, total: { maxCostUsd: CAP, strict: true } },
    );
    expect(billing.server.rejected).toEqual([]);
    return { report, billedUsd: billing.billing.usd, overshotUsd: billing.billing.overshotUsd };
  } finally {
    await billing.server.close();
  }
}

it('an adversarial billing server: the cap holds, and billed ≤ reported billed + uncertain, reported billed ≤ billed', async () => {
  await fc.assert(
    fc.asyncProperty(billingScripts(8), async (script) => {
      const { report, billedUsd, overshotUsd } = await batchAgainst(script, 8);
      const { costUsd, uncertainUsd } = report.totals;
      expect(billedUsd - overshotUsd).toBeLessThanOrEqual(CAP + 1e-12);
      expect(costUsd).toBeGreaterThanOrEqual(billedUsd - overshotUsd - 1e-9);
      expect(costUsd - uncertainUsd).toBeLessThanOrEqual(billedUsd + 1e-9);
    }),
    { numRuns: 8, seed: 20261202 },
  );
}, 240_000);

it('a 429 storm (half the requests refused, none billed): the batch completes what the cap allows', async () => {
  // An answer bills about $0.0101 (2,000 output tokens and the input at $5 per million): 9 fit in $0.10.
  const { report, billedUsd } = await batchAgainst({ moves: ['429', 'ok'], stream: false }, 12);
  const done = report.runs.filter((r) => r.outcome === 'end_of_turn').length;
  const perTask = billedUsd / done;
  const allowed = Math.floor(CAP / perTask);
  expect(done).toBeGreaterThanOrEqual(Math.floor(0.9 * allowed));
  expect(report.totals.releasedUsd).toBeGreaterThan(0);
  expect(billedUsd).toBeLessThanOrEqual(CAP);
}, 120_000);
