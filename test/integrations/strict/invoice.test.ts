import OpenAI from 'openai';
import { formatBatchReport, runBatch, type BatchOptions, type BatchReport } from 'agent-state-machine';
import { fromOpenAIChat } from '../../../lib/integrations/openai';
import { startBillingServer, type BillingServer, type Move } from '../../helpers/billingServer';
import { localPricing as pricing } from '../../helpers/localPricing';

// The money figures against the invoice: the real OpenAI client (its own retries off, so that
// each attempt is one the library sees) against a local server that bills as a provider does —
// every request it takes in full, nothing for a 429. What the report calls billed must be what
// the server billed for answered calls, and billed + uncertain never less than the bill.

const MAX_OUTPUT = 500;
const TASKS = 50;

let billing: BillingServer;
beforeAll(async () => {
  billing = await startBillingServer(5_000);
});
afterAll(() => billing.server.close());

async function batch(
  moves: Move[],
  tasks: number,
  cap: number | undefined,
  concurrency = 4,
  more: Partial<BatchOptions> = {},
): Promise<BatchReport> {
  billing.reset(moves);
  const client = new OpenAI({ apiKey: 'sk-local', baseURL: billing.server.baseURL, maxRetries: 0 });
  const loop = fromOpenAIChat(client, { model: 'gpt-local', maxTokens: MAX_OUTPUT, stream: true });
  const report = await runBatch(
    Array.from({ length: tasks }, (_, i) => ({ id: `t${i}`, input: 'Say done', agent: () => loop })),
    {
      logger: false,
      concurrency,
      pricing,
      ...(cap === undefined ? {} : { total: { maxCostUsd: cap, strict: true } }),
      retry: { retries: 8, shouldRetry: () => true },
      sleep: async () => undefined,
      ...more,
    },
  );
  expect(billing.server.rejected).toEqual([]);
  return report;
}

describe('the three figures against what the server billed', () => {
  it('a 429 storm (half the requests refused, none billed) releases its holds: a strict batch completes ≥ 90% of what the cap allows', async () => {
    // What the cap allows: the same batch under the same cap, with no 429s (one at a time, so
    // that it is plain: runs go on while spent + the next call's hold fit).
    await batch(['ok'], 1, undefined);
    const cap = billing.billing.usd * 20.5;
    const calm = await batch(['ok'], TASKS, cap, 1);
    const allows = calm.runs.filter((r) => r.outcome === 'end_of_turn').length;
    expect(allows).toBeGreaterThanOrEqual(10);
    const report = await batch(['429', 'ok'], TASKS, cap, 1);
    const done = report.runs.filter((r) => r.outcome === 'end_of_turn').length;
    // Charged at their holds, the 429s drained the cap early: 6 of 14 on this server.
    expect(done).toBeGreaterThanOrEqual(Math.ceil(allows * 0.9));
    expect(billing.billing.usd).toBeLessThanOrEqual(cap + 1e-12);
    // Every answered request reported its usage: billed is the bill, nothing uncertain, the 429s released.
    expect(report.totals.costUsd).toBeCloseTo(billing.billing.usd, 9);
    expect(report.totals.uncertainUsd).toBe(0);
    expect(report.totals.releasedUsd).toBeGreaterThan(0);
    expect(formatBatchReport(report)).toMatch(/Money: \$\d+\.\d{4} billed, \$\d+\.\d{4} released \(not billed\)/);
  }, 60_000);

  it('a response without usage is uncertain at its worst case, never $0: the cap holds and the report says so', async () => {
    const cap = 0.05;
    const report = await batch(['noUsage'], 10, cap);
    const billed = billing.billing.usd;
    expect(billed).toBeGreaterThan(0);
    expect(billed).toBeLessThanOrEqual(cap);
    // Nothing reported usage: all of it is uncertain, and it covers the bill.
    expect(report.totals.costUsd).toBeGreaterThanOrEqual(billed - 1e-9);
    expect(report.totals.uncertainUsd).toBe(report.totals.costUsd);
    expect(formatBatchReport(report)).toMatch(/Money: \$0\.0000 billed, \$\d+\.\d{4} uncertain/);
  }, 60_000);

  it('a batch of mixed failures: reported billed equals the bill for answered calls, billed + uncertain covers the bill', async () => {
    const report = await batch(['ok', '429', '500', 'ok', 'noUsage', 'ok'], 12, 0.5);
    const billed = billing.billing.usd;
    const reportedBilled = report.totals.costUsd - report.totals.uncertainUsd;
    // The 500s and the answers without usage were billed at the server but reported no usage: uncertain.
    expect(report.totals.costUsd).toBeGreaterThanOrEqual(billed - 1e-9);
    expect(reportedBilled).toBeLessThanOrEqual(billed + 1e-9);
    expect(report.totals.uncertainUsd).toBeGreaterThan(0);
    expect(report.totals.releasedUsd).toBeGreaterThan(0);
  }, 60_000);

  it("follows the user's billing rows: a proxy that bills its 429s makes them uncertain again", async () => {
    const billing429 = {
      status: 429,
      billing: 'uncertain' as const,
      providers: ['my-proxy'],
      why: 'it bills them',
      source: 'our contract',
    };
    const report = await batch(['429', 'ok'], 4, 0.5, 1, { billing: [billing429] });
    expect(report.totals.releasedUsd).toBe(0);
    expect(report.totals.uncertainUsd).toBeGreaterThan(0);
    expect(formatBatchReport(report)).toMatch(/billed, \$\d+\.\d{4} uncertain/);
  }, 60_000);
});
