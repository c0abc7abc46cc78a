// A run taken over says why its money is uncertain over every attempt, each call once: the
// earlier attempt's calls by their own reason, and the call whose hold the takeover charges
// again (its credit) by the takeover's reason alone. Real Redis, a FileStore, two real workers,
// the first worker's job lock lapsing when the test says.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createScriptedAgent, type AgentLoop, type ScriptedReply } from 'agent-state-machine';
import { FileStore } from 'agent-state-machine/batch';
import { Redis } from 'ioredis';
import { submitBatch, type BatchWorkerHandle } from '../../../lib/integrations/bullmq/index';
import { deletePrefix, releaseRedis, testRedisUrl, uniquePrefix } from '../../helpers/redis';
import { lapseLock, lapsingWorker } from '../../helpers/lapsingWorker';
import { moment, until } from '../../helpers/moment';

let url: string;
beforeAll(async () => {
  url = await testRedisUrl();
});
afterAll(() => releaseRedis());

const usage = { inputTokens: 100, outputTokens: 20 };
// A 500 after the request left (its $0.01 hold charged, uncertain), an answer asking for a tool, then the end.
const REPLIES: ScriptedReply[] = [
  { error: 'HTTP 500' },
  { toolCalls: [{ id: 'c1', name: 'work', input: {} }], model: 'gpt-local', usage },
  { text: 'done', model: 'gpt-local', usage },
];

/**
 * Two workers on one run: the first runs the task's agent until `lostAt` (a moment it waits at
 * forever), its lock lapses, and the second takes the run over and ends it. The run's report.
 */
async function takenOver(
  firstAgent: (lost: () => Promise<void>) => AgentLoop,
  options: { replies?: ScriptedReply[]; retryDelayMs?: number; lostWhen?: (dir: string) => Promise<void> } = {},
) {
  const prefix = uniquePrefix('takeoverreasons');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'asm-takeover-reasons-'));
  const redis = new Redis(url);
  const workers: BatchWorkerHandle[] = [];
  const lost = moment('the first attempt lost');
  let release!: () => void;
  const forever = new Promise<void>((resolve) => (release = resolve));
  let made = 0;
  const agent = (): AgentLoop =>
    made++ === 0
      ? firstAgent(() => {
          lost.reached();
          return forever;
        })
      : createScriptedAgent({
          replies: options.replies ?? REPLIES,
          tools: { work: { output: 'worked' } },
          bound: { inputTokens: 1000, maxOutputTokens: 1000, model: 'gpt-local' },
          sleep: async () => undefined,
        });
  const start = (id: string): BatchWorkerHandle =>
    lapsingWorker({
      connection: url,
      prefix,
      workerId: id,
      store: new FileStore(dir),
      journal: true,
      // $5 a million tokens: a call bounded at 2,000 tokens holds $0.01; an answer is billed $0.0006.
      pricing: (u) => ((u.inputTokens ?? 0) + (u.outputTokens ?? 0)) * 5e-6,
      closeTimeoutMs: 500,
      onError: () => undefined,
      agent,
    });
  try {
    workers.push(start('first'));
    const batch = await submitBatch([{ id: 't0', input: 'go' }], {
      connection: url,
      name: 'runs',
      prefix,
      retry: { retries: 2, baseDelayMs: options.retryDelayMs ?? 1, maxDelayMs: options.retryDelayMs ?? 1 },
      retryLostRuns: 1,
      total: { maxCostUsd: 1, strict: true },
    });
    await lost.wait();
    await options.lostWhen?.(dir);
    await lapseLock(redis, prefix);
    workers.push(start('takeover'));
    const [run] = (await batch.report()).runs;
    expect(run).toMatchObject({ id: 't0', outcome: 'end_of_turn', attempt: 2, worker: 'takeover' });
    return run!;
  } finally {
    release();
    await Promise.all(workers.map((w) => w.close()));
    redis.disconnect();
    await deletePrefix(url, prefix);
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

const TAKEN_OVER = /^taken over: attempt 1's call held at its worst case/;

it("names the earlier attempt's 500 and the takeover's credit: two calls, each once", async () => {
  // Lost while its tool runs: its 500 reached the budget; its answer's charge did not, so the
  // takeover charges that call's $0.01 hold again, as uncertain.
  const run = await takenOver((lost) =>
    createScriptedAgent({
      replies: REPLIES,
      tools: { work: () => lost().then(() => 'late') },
      bound: { inputTokens: 1000, maxOutputTokens: 1000, model: 'gpt-local' },
      sleep: async () => undefined,
    }),
  );
  expect(run.usage.uncertainUsd).toBeCloseTo(0.02, 10);
  expect(run.uncertain).toEqual(
    expect.arrayContaining([
      { why: expect.stringMatching(TAKEN_OVER), calls: 1 },
      { why: 'it failed after the request may have left (HTTP 500)', calls: 1 },
    ]),
  );
  expect(run.uncertain).toHaveLength(2);
}, 60_000);

it('names a call in flight when its attempt was lost once, by the takeover that charges its hold again', async () => {
  // Lost with its retry in flight (reserved, held, not answered): that call is the credit's.
  const run = await takenOver((lost) => {
    const inner = createScriptedAgent({
      replies: REPLIES,
      bound: { inputTokens: 1000, maxOutputTokens: 1000, model: 'gpt-local' },
      sleep: async () => undefined,
    });
    let calls = 0;
    return {
      ...inner,
      sendUserMessage: async (message, ctx) => {
        if (++calls === 2) await lost();
        return inner.sendUserMessage(message, ctx);
      },
    };
  });
  // Each attempt's 500, and the credit; the second attempt began again (nothing answered to serve).
  expect(run.usage.uncertainUsd).toBeCloseTo(0.03, 10);
  expect(run.uncertain).toEqual([
    { why: expect.stringMatching(TAKEN_OVER), calls: 1 },
    { why: 'it failed after the request may have left (HTTP 500)', calls: 2 },
  ]);
}, 60_000);

it('names a call whose charge the credit takes the place of once, by the takeover: lost waiting to retry its 500', async () => {
  // Lost in its retry's minute-long wait: the 500's charge, kept for the next call, never reached
  // the budget, so the takeover charges its hold again. The second attempt is answered at once.
  let file = '';
  const run = await takenOver(
    (lost) => {
      const inner = createScriptedAgent({
        replies: REPLIES.slice(1),
        bound: { inputTokens: 1000, maxOutputTokens: 1000, model: 'gpt-local' },
        sleep: async () => undefined,
      });
      let calls = 0;
      return {
        ...inner,
        sendUserMessage: async (message, ctx) => {
          if (++calls > 1) return inner.sendUserMessage(message, ctx);
          void lost();
          throw Object.assign(new Error('HTTP 500'), { status: 500 });
        },
      };
    },
    {
      replies: [{ text: 'done', model: 'gpt-local', usage }],
      retryDelayMs: 60_000,
      // Its records say why the 500's money is uncertain before the lock lapses.
      lostWhen: (dir) =>
        until('the 500 is in the records', () => {
          const batchDir = fs.readdirSync(dir).map((b) => path.join(dir, b))[0];
          file = batchDir === undefined ? '' : path.join(batchDir, 't0.jsonl');
          return fs.existsSync(file) && fs.readFileSync(file, 'utf8').includes('"chargedAtHold"');
        }),
    },
  );
  expect(run.usage.uncertainUsd).toBeCloseTo(0.01, 10);
  expect(run.uncertain).toEqual([{ why: expect.stringMatching(TAKEN_OVER), calls: 1 }]);
}, 60_000);
