// A run taken over while its worker waits to retry a 429: its records say the 429's hold was let
// go, but a worker tells Redis of a release with its next call (deferred), so Redis still holds it.
// The takeover charges that hold as uncertain (the run's credit); it must not also count it as
// released. Real Redis, a FileStore, two real workers, the lock's expiry when the test says.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { createScriptedAgent, type AgentLoop } from 'agent-state-machine';
import { FileStore } from 'agent-state-machine/batch';
import { batchKeys } from '../../../lib/integrations/bullmq/batchKeys';
import { releaseRedis, testRedisUrl } from '../../helpers/redis';
import { takenOver } from '../../helpers/takenOver';
import { moment, until } from '../../helpers/moment';

let url: string;
beforeAll(async () => {
  url = await testRedisUrl();
});
afterAll(() => releaseRedis());

it("counts a hold once: the takeover charges it as uncertain, and the attempt's release Redis never heard is not added", async () => {
  const refused = moment('the first attempt refused with a 429');
  const agent = (attempt: number): AgentLoop => {
    const inner = createScriptedAgent({
      replies: [{ text: 'ok', model: 'gpt-local', usage: { inputTokens: 100, outputTokens: 20 } }],
      bound: { inputTokens: 1000, maxOutputTokens: 1000, model: 'gpt-local' },
      sleep: async () => undefined,
    });
    if (attempt > 1) return inner;
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
  await takenOver(
    url,
    {
      agent,
      lost: refused.wait,
      // The first attempt waits a minute before its retry: it is taken over meanwhile.
      retryDelayMs: 60_000,
      beforeLapse: async ({ dir, redis, prefix, batchId }) => {
        // The 429's release is in the run's records once its ledger line is written.
        await until(
          'the release is in the records',
          async () =>
            (await new FileStore(dir).listRuns({ batchId })).length > 0 &&
            fs
              .readdirSync(path.join(dir, batchId))
              .some(
                (f) =>
                  f.endsWith('.jsonl') &&
                  fs.readFileSync(path.join(dir, batchId, f), 'utf8').includes('"releasedUsd":0.01'),
              ),
        );
        // Redis has not heard of it: the hold is still there.
        expect(Number(await redis.hget(batchKeys(prefix, 'runs', batchId).budget, 'hc'))).toBeCloseTo(0.01, 10);
      },
    },
    async (run, { redis, prefix, batchId }) => {
      expect(run).toMatchObject({ id: 't0', outcome: 'end_of_turn', attempt: 2, worker: 'takeover' });
      // The hold counts once, as uncertain; the answer is billed.
      expect(run.usage.costUsd).toBeCloseTo(0.0106, 10);
      expect(run.usage.uncertainUsd).toBeCloseTo(0.01, 10);
      expect(run.usage.releasedUsd).toBe(0);
      expect(Number((await redis.hget(batchKeys(prefix, 'runs', batchId).budget, 'cr')) ?? 0)).toBe(0);
    },
  );
}, 60_000);
