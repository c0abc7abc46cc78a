import * as net from 'node:net';
import fc from 'fast-check';
import OpenAI from 'openai';
import { formatBatchReport, runBatch, type BatchReport, type Pricing } from 'agent-state-machine';
import { fromOpenAIChat } from '../../../lib/integrations/openai';
import { startOpenAIChatServer, type ChatAction } from '../../../examples/servers/openaiChatServer';

// The real OpenAI client against a local billing server. The provider answers every request it
// takes in full (every output token the request allows) and bills it, whether or not the
// client sees the answer: a response under a model id the prices lack, a stream cut before or
// after its usage chunk, a 500. A 429 is refused before any work and billed nothing.

/** What the server does with one request. */
type Move = 'ok' | 'dated' | 'throws' | 'cutBeforeUsage' | 'cutAfterUsage' | '429' | '500';
const MOVES: readonly Move[] = ['ok', 'dated', 'throws', 'cutBeforeUsage', 'cutAfterUsage', '429', '500'];

// $5 per million tokens, in or out, for gpt-local. Pricing throws for gpt-local-throws: only a
// response names it (the request's bound names gpt-local), so it throws on real usage alone.
const USD_PER_TOKEN = 5e-6;
const pricing: Pricing = (u, { model }) => {
  if (model === 'gpt-local-throws') throw new Error('no price sheet for gpt-local-throws');
  return model === 'gpt-local' ? ((u.inputTokens ?? 0) + (u.outputTokens ?? 0)) * USD_PER_TOKEN : undefined;
};
const MAX_OUTPUT = 2000;
// What the server bills for input: about one token per 4 characters of the body, as tokenizers do.
const billedInput = (body: unknown): number => Math.ceil(JSON.stringify(body).length / 4);

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
  requests: number;
}

async function batchAgainst(moveOf: (request: number) => Move, tasks: number, cap: number, strict: boolean) {
  let billedUsd = 0;
  const server = await startOpenAIChatServer({
    respond: (body: { max_completion_tokens: number }, index): ChatAction => {
      const move = moveOf(index);
      if (move === '429') return { error: { status: 429, message: 'Rate limit reached', type: 'requests' } };
      const usage = { prompt_tokens: billedInput(body), completion_tokens: body.max_completion_tokens };
      billedUsd += (usage.prompt_tokens + usage.completion_tokens) * USD_PER_TOKEN;
      if (move === '500') return { error: { status: 500, message: 'The server had an error' } };
      const model = move === 'dated' ? 'gpt-local-2025-01-01' : move === 'throws' ? 'gpt-local-throws' : 'gpt-local';
      const dropAfterChunks = move === 'cutBeforeUsage' ? 1 : move === 'cutAfterUsage' ? 1000 : undefined;
      return { content: 'done', usage, model, ...(dropAfterChunks === undefined ? {} : { dropAfterChunks }) };
    },
  });
  try {
    const client = new OpenAI({ apiKey: 'sk-local', baseURL: server.baseURL });
    const loop = fromOpenAIChat(client, { model: 'gpt-local', maxTokens: MAX_OUTPUT, stream: true });
    const report = await runBatch(
      Array.from({ length: tasks }, (_, i) => ({ id: `t${i}`, input: 'Say done', agent: () => loop })),
      {
        logger: false,
        concurrency: 4,
        pricing,
        total: { maxCostUsd: cap, strict },
        retry: { retries: 2, shouldRetry: () => true },
        sleep: async () => undefined,
      },
    );
    expect(server.rejected).toEqual([]);
    return { report, billedUsd, requests: server.exchanges.length } satisfies Billed;
  } finally {
    await server.close();
  }
}

describe('a strict total through the real OpenAI client: money that may have been spent counts as spent', () => {
  it.each<[string, Move]>([
    ['every answer names a dated model id the prices lack', 'dated'],
    ['pricing throws on every real usage', 'throws'],
    ['every stream is cut after its usage chunk, and retried', 'cutAfterUsage'],
  ])('%s: 40 tasks stay within $0.30, and the report counts at least what was billed', async (_, move) => {
    const { report, billedUsd, requests } = await batchAgainst(() => move, 40, 0.3, true);
    // Without the rule these bill $0.41 ($1.20 with the retries) and report $0.
    expect(requests).toBeGreaterThan(10);
    expect(billedUsd).toBeLessThanOrEqual(0.3);
    expect(report.totals.costUsd).toBeGreaterThanOrEqual(billedUsd - 1e-9);
    expect(report.totals.costUsd).toBeLessThanOrEqual(0.3);
    expect(formatBatchReport(report)).toMatch(new RegExp(`cost +\\$${report.totals.costUsd.toFixed(4)} `));
  });

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
  const moves = fc.array(fc.constantFrom(...MOVES), { minLength: 1, maxLength: 12 });
  const scripted = (script: Move[]) => (request: number) => script[request % script.length]!;

  it('never bills past a strict total, and the report counts at least what was billed', async () => {
    await fc.assert(
      fc.asyncProperty(moves, async (script) => {
        const { report, billedUsd } = await batchAgainst(scripted(script), 16, 0.1, true);
        expect(billedUsd).toBeLessThanOrEqual(0.1 + 1e-12);
        expect(report.totals.costUsd).toBeGreaterThanOrEqual(billedUsd - 1e-9);
      }),
      { numRuns: 12, seed: 20261127 },
    );
  });

  it('bites: with strict: false, fast-check finds a server that bills past the cap', async () => {
    const found = await fc.check(
      fc.asyncProperty(moves, async (script) => {
        const { billedUsd } = await batchAgainst(scripted(script), 16, 0.1, false);
        return billedUsd <= 0.1 + 1e-12;
      }),
      { numRuns: 12, seed: 20261127, endOnFailure: true },
    );
    expect(found.failed).toBe(true);
    expect(found.counterexample).not.toBeNull();
  });
});
