import * as net from 'node:net';
import fc from 'fast-check';
import OpenAI from 'openai';
import { formatBatchReport, runBatch, type BatchReport } from 'agent-state-machine';
import { fromOpenAIChat } from '../../../lib/integrations/openai';
import {
  billingScripts,
  startBillingServer,
  unreadOvershootUsd,
  type Move,
  type Script,
} from '../../helpers/billingServer';
import { localPricing as pricing } from '../../helpers/localPricing';

// The real OpenAI client against a local billing server (test/helpers/billingServer.ts): the
// provider answers every request it takes in full and bills it, whether or not the client sees
// the answer. A 429 is refused before any work and billed nothing.

const MAX_OUTPUT = 2000;
// Short for the late answers, long enough that a loaded machine reads most answers in time.
const TIMEOUT_MS = 500;
// Runs in flight at once: the batch's concurrency.
const IN_FLIGHT = 4;

/** A port nothing listens on: one the system handed out, then closed. */
async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

interface Billed {
  report: BatchReport;
  billedUsd: number;
  /** What answers past their max output tokens billed beyond it, and how many there were. */
  overshotUsd: number;
  overshoots: number;
  requests: number;
}

async function batchAgainst({ moves, stream }: Script, tasks: number, cap: number, strict: boolean): Promise<Billed> {
  const billing = await startBillingServer(10 * TIMEOUT_MS);
  billing.reset(moves);
  try {
    const client = new OpenAI({ apiKey: 'sk-local', baseURL: billing.server.baseURL, timeout: TIMEOUT_MS });
    const loop = fromOpenAIChat(client, { model: 'gpt-local', maxTokens: MAX_OUTPUT, stream });
    const report = await runBatch(
      Array.from({ length: tasks }, (_, i) => ({ id: `t${i}`, input: 'Say done', agent: () => loop })),
      {
        logger: false,
        concurrency: IN_FLIGHT,
        pricing,
        total: { maxCostUsd: cap, strict },
        retry: { retries: 2, shouldRetry: () => true },
        sleep: async () => undefined,
      },
    );
    expect(billing.server.rejected).toEqual([]);
    const { usd, overshotUsd, overshoots } = billing.billing;
    return { report, billedUsd: usd, overshotUsd, overshoots, requests: billing.server.exchanges.length };
  } finally {
    await billing.server.close();
  }
}

describe('a strict total through the real OpenAI client: money that may have been spent counts as spent', () => {
  it.each<[string, Move]>([
    ['every answer names a dated model id the prices lack', 'dated'],
    ['pricing throws on every real usage', 'throws'],
    ['every stream is cut after its usage chunk, and retried', 'cutAfterUsage'],
  ])(
    '%s: 40 tasks stay within $0.30, and the report counts at least what was billed',
    async (_, move) => {
      const { report, billedUsd, requests } = await batchAgainst({ moves: [move], stream: true }, 40, 0.3, true);
      // Without the rule these bill $0.41 ($1.20 with the retries) and report $0.
      expect(requests).toBeGreaterThan(10);
      expect(billedUsd).toBeLessThanOrEqual(0.3);
      expect(report.totals.costUsd).toBeGreaterThanOrEqual(billedUsd - 1e-9);
      expect(report.totals.costUsd).toBeLessThanOrEqual(0.3);
      expect(formatBatchReport(report)).toMatch(new RegExp(`cost +\\$${report.totals.costUsd.toFixed(4)} `));
    },
    60_000,
  );

  it('releases the hold of a request that never left: connection refused costs nothing and leaves the cap whole', async () => {
    // A port just freed: nothing listens there, so every attempt is refused before a byte is sent.
    const port = await freePort();
    const client = new OpenAI({ apiKey: 'sk-local', baseURL: `http://127.0.0.1:${port}/v1` });
    const loop = fromOpenAIChat(client, { model: 'gpt-local', maxTokens: MAX_OUTPUT });
    const report = await runBatch(
      Array.from({ length: 5 }, (_, i) => ({ id: `t${i}`, input: 'hi', agent: () => loop })),
      {
        logger: false,
        pricing,
        total: { maxCostUsd: 0.3, strict: true },
        retry: { retries: 2, shouldRetry: () => true },
        sleep: async () => undefined,
      },
    );
    expect(report.runs.map((r) => r.outcome)).toEqual(Array(5).fill('error'));
    expect(report.totals).toMatchObject({ costUsd: 0, llmCalls: 15 });
  });
});

describe('an adversarial billing server choosing each reply (property-based)', () => {
  const scripts = billingScripts(12);

  it('never bills past a strict total but for the documented overshoot, and the report counts at least what was billed', async () => {
    // Batches that met a server ignoring max tokens: the seeded scripts must include some.
    let overBatches = 0;
    await fc.assert(
      fc.asyncProperty(scripts, async (script) => {
        const { report, billedUsd, overshotUsd, overshoots } = await batchAgainst(script, 16, 0.1, true);
        // What answers past their bound billed beyond it, from at most one response per run in flight.
        expect(billedUsd - overshotUsd).toBeLessThanOrEqual(0.1 + 1e-12);
        expect(overshoots).toBeLessThanOrEqual(IN_FLIGHT);
        // All of it but an overshoot no run read: a client that timed out first held its call
        // at the worst case, and never saw what the server billed past it.
        const unread = unreadOvershootUsd({ overshotUsd, overshoots }, report.runs);
        expect(report.totals.costUsd).toBeGreaterThanOrEqual(billedUsd - unread - 1e-9);
        if (overshoots > 0 && unread < overshotUsd) {
          overBatches += 1;
          // The batch stops at one it read, and says why.
          expect(report.runs.some((r) => /past its bound of 2000/.test(r.error?.message ?? ''))).toBe(true);
        }
      }),
      { numRuns: 14, seed: 20261127 },
    );
    expect(overBatches).toBeGreaterThan(0);
  }, 120_000);

  it('bites: with strict: false, fast-check finds a server that bills past the cap', async () => {
    const found = await fc.check(
      fc.asyncProperty(scripts, async (script) => {
        const { billedUsd } = await batchAgainst(script, 16, 0.1, false);
        return billedUsd <= 0.1 + 1e-12;
      }),
      { numRuns: 14, seed: 20261127, endOnFailure: true },
    );
    expect(found.failed).toBe(true);
    expect(found.counterexample).not.toBeNull();
  }, 120_000);
});
