// A run taken over while its worker waits to retry a 429: its records say the 429's hold was let
// go, but a worker tells Redis of a release with its next call (deferred), so Redis still holds it.
// The takeover charges that hold as uncertain (the run's credit); it must not also count it as
// released. Real Redis, a FileStore, two real workers, the lock's expiry when the test says.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createScriptedAgent, type AgentLoop } from 'agent-state-machine';
import { FileStore } from 'agent-state-machine/batch';
import { Redis } from 'ioredis';
import { batchKeys } from '../../../lib/integrations/bullmq/batchKeys';
import { submitBatch, type BatchWorkerHandle } from '../../../lib/integrations/bullmq/index';
import { deletePrefix, releaseRedis, testRedisUrl, uniquePrefix } from '../../helpers/redis';
import { lapseLock, lapsingWorker } from '../../helpers/lapsingWorker';
import { moment, until } from '../../helpers/moment';

let url: string;
beforeAll(async () => {
  url = await testRedisUrl();
});
afterAll(() => releaseRedis());

it("counts a hold once: the takeover charges it as uncertain, and the attempt's release Redis never heard is not added", async () => {
  const prefix = uniquePrefix('takeoverreleased');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'asm-takeover-released-'));
  const redis = new Redis(url);
  const workers: BatchWorkerHandle[] = [];
  const refused = moment('the first attempt refused with a 429');
  let made = 0;
  const agent = (): AgentLoop => {
    const first = made++ === 0;
    const inner = createScriptedAgent({
      replies: [{ text: 'ok', model: 'gpt-local', usage: { inputTokens: 100, outputTokens: 20 } }],
      bound: { inputTokens: 1000, maxOutputTokens: 1000, model: 'gpt-local' },
      sleep: async () => undefined,
    });
    if (!first) return inner;
    let calls = 0;
    return {
      ...inner,
      sendUserMessage: async (message, ctx) => {
        if (++calls === 1) {
          refused.reached();
          throw Object.assign(new Error('429 rate limited'), { status: 429 });
        }
        return inner.sendUserMessage(message, ctx);
      },
    };
  };
  const start = (id: string): BatchWorkerHandle =>
    lapsingWorker({
      connection: url,
      prefix,
      workerId: id,
      store: new FileStore(dir),
      journal: true,
      // $5 a million tokens: a call bounded at 2,000 tokens holds $0.01; the answer is billed $0.0006.
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
      // The first attempt waits a minute before its retry: it is taken over meanwhile.
      retry: { retries: 2, baseDelayMs: 60_000, maxDelayMs: 60_000 },
      retryLostRuns: 1,
      total: { maxCostUsd: 1, strict: true },
    });
    const keys = batchKeys(prefix, 'runs', batch.batchId);
    await refused.wait();
    // The 429's release is in the run's records once its ledger line is written.
    await until(
      'the release is in the records',
      async () =>
        (await new FileStore(dir).listRuns({ batchId: batch.batchId })).length > 0 &&
        fs
          .readdirSync(path.join(dir, batch.batchId))
          .some(
            (f) =>
              f.endsWith('.jsonl') &&
              fs.readFileSync(path.join(dir, batch.batchId, f), 'utf8').includes('"releasedUsd":0.01'),
          ),
    );
    // Redis has not heard of it: the hold is still there.
    expect(Number(await redis.hget(keys.budget, 'hc'))).toBeCloseTo(0.01, 10);

    await lapseLock(redis, prefix);
    workers.push(start('takeover'));
    const report = await batch.report();
    const [run] = report.runs;
    expect(run).toMatchObject({ id: 't0', outcome: 'end_of_turn', attempt: 2, worker: 'takeover' });
    // The hold counts once, as uncertain; the answer is billed.
    expect(run!.usage.costUsd).toBeCloseTo(0.0106, 10);
    expect(run!.usage.uncertainUsd).toBeCloseTo(0.01, 10);
    expect(run!.usage.releasedUsd).toBe(0);
    expect(Number((await redis.hget(keys.budget, 'cr')) ?? 0)).toBe(0);
  } finally {
    await Promise.all(workers.map((w) => w.close()));
    redis.disconnect();
    await deletePrefix(url, prefix);
    fs.rmSync(dir, { recursive: true, force: true });
  }
}, 60_000);
