import Anthropic from '@anthropic-ai/sdk';
import fc from 'fast-check';
import OpenAI from 'openai';
import { observeTask, runBatch, type AgentLoop, type BatchReport } from 'agent-state-machine';
import { fromAnthropic } from '../../../lib/integrations/anthropic';
import { fromOpenAIChat, fromOpenAIResponses, meteredFetch } from '../../../lib/integrations/openai';
import {
  onTimeScripts,
  startBillingServer,
  type BillingServer,
  type Move,
  type Protocol,
} from '../../helpers/billingServer';
import { localPricing as pricing } from '../../helpers/localPricing';
import { expectBilledAsAnswered, expectStormCompleted, sayDone } from '../../helpers/reconciliation';

// The reconciliation's equality: what a report calls billed is, to the cent, what the server
// billed for the answers it sent whole with their usage (`Billing.answeredUsd`). The properties
// beside this one bound the report from both sides; this one pins the billed figure itself on
// each ready-made loop and on your own loop metered at the wire, each reply chosen by fast-check.
// No reply comes late and no client times out, so "answered" means the same to both ends.

const MAX_OUTPUT = 2000;
const TASKS = 8;

/** A path: its wire, its tasks, and whether runBatch retries them (a framework's tasks retry on their own). */
type Path = {
  name: string;
  protocol: Protocol;
  retried?: false;
  tasks(baseURL: string, stream: boolean, count: number): Parameters<typeof runBatch>[0];
};

const loopTasks =
  (loop: (baseURL: string, stream: boolean) => AgentLoop) => (baseURL: string, stream: boolean, count: number) =>
    Array.from({ length: count }, (_, i) => ({ id: `t${i}`, input: 'Say done', agent: () => loop(baseURL, stream) }));

const PATHS: Path[] = [
  {
    name: 'fromOpenAIChat',
    protocol: 'chat',
    tasks: loopTasks((baseURL, stream) =>
      fromOpenAIChat(new OpenAI({ apiKey: 'sk-local', baseURL }), {
        model: 'gpt-local',
        maxTokens: MAX_OUTPUT,
        stream,
      }),
    ),
  },
  {
    name: 'fromOpenAIResponses',
    protocol: 'responses',
    tasks: loopTasks((baseURL, stream) =>
      fromOpenAIResponses(new OpenAI({ apiKey: 'sk-local', baseURL }), {
        model: 'gpt-local',
        maxTokens: MAX_OUTPUT,
        stream,
      }),
    ),
  },
  {
    name: 'fromAnthropic',
    protocol: 'anthropic',
    tasks: loopTasks((baseURL, stream) =>
      fromAnthropic(new Anthropic({ apiKey: 'sk-ant-local', baseURL }), {
        model: 'gpt-local',
        maxTokens: MAX_OUTPUT,
        stream,
      }),
    ),
  },
  {
    // Your own loop on the real client at its defaults (its own two retries), metered at the wire.
    name: 'your loop on meteredFetch',
    protocol: 'chat',
    retried: false,
    tasks: (baseURL, stream, count) => {
      const client = new OpenAI({ apiKey: 'sk-local', baseURL, fetch: meteredFetch });
      return Array.from({ length: count }, (_, i) =>
        observeTask(`t${i}`, 'Say done', () => sayDone(client, stream, MAX_OUTPUT)),
      );
    },
  },
];

describe.each(PATHS)('$name: reported billed = what the server billed for answers read whole', (path) => {
  let billing: BillingServer;
  beforeAll(async () => {
    billing = await startBillingServer(0, path.protocol);
  });
  afterAll(() => billing.server.close());

  // By default a cap the batch never nears: nothing is cut short, so every answer sent is read.
  async function batch(
    script: { moves: Move[]; stream: boolean },
    { cap = 10, tasks = TASKS, retries = 2 } = {},
  ): Promise<BatchReport> {
    billing.reset(script.moves);
    const report = await runBatch(path.tasks(billing.server.baseURL, script.stream, tasks), {
      logger: false,
      concurrency: 4,
      pricing,
      total: { maxCostUsd: cap, strict: true },
      ...(path.retried === false ? {} : { retry: { retries, shouldRetry: () => true }, sleep: async () => undefined }),
    });
    expect(billing.server.rejected).toEqual([]);
    return report;
  }

  it('for every script of replies', async () => {
    await fc.assert(
      fc.asyncProperty(onTimeScripts(10), async (script) => {
        const report = await batch(script);
        expectBilledAsAnswered(report, billing.billing);
      }),
      { numRuns: 10, seed: 20261204 },
    );
  }, 180_000);

  it('bites: a report whose every answer was read has billed > 0, and a 500 is never billed', async () => {
    const whole = await batch({ moves: ['ok'], stream: false });
    expect(whole.totals.costUsd - (whole.totals.uncertainUsd ?? 0)).toBeGreaterThan(0);
    expect(billing.billing.answeredUsd).toBeCloseTo(billing.billing.usd, 12);
    const failed = await batch({ moves: ['500'], stream: false });
    expect(billing.billing.answeredUsd).toBe(0);
    expect(failed.totals.costUsd - (failed.totals.uncertainUsd ?? 0)).toBeCloseTo(0, 12);
    expect(failed.totals.uncertainUsd).toBeGreaterThan(0);
  }, 60_000);

  it('a 429 storm (half the requests refused, none billed): a strict batch completes what the cap allows', async () => {
    const CAP = 0.1;
    // An answer bills about $0.0101 (2,000 output tokens and the input at $5 per million): 9 fit in $0.10.
    const report = await batch({ moves: ['429', 'ok'], stream: false }, { cap: CAP, tasks: 12, retries: 5 });
    expectStormCompleted(report, billing.billing.usd, CAP);
  }, 60_000);
});
