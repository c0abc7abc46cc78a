// A run taken over in a batch with no pricing: the calls its first attempt made are of unknown
// cost, counted in Redis (`<index>:cn`) and in no record of the attempt that takes it over. The
// run's report, and a report read later, say Redis's count over every attempt, as they say its
// dollars (takeoverCredit.ts). Real Redis, two real workers, the lock's expiry when the test says.
import { createScriptedAgent, type ScriptedAgent, type ScriptedReply } from 'agent-state-machine';
import { Redis } from 'ioredis';
import { batchKeys } from '../../../lib/integrations/bullmq/batchKeys';
import { attachBatch, submitBatch, type BatchWorkerHandle } from '../../../lib/integrations/bullmq/index';
import { deletePrefix, releaseRedis, testRedisUrl, uniquePrefix } from '../../helpers/redis';
import { lapseLock, lapsingWorker } from '../../helpers/lapsingWorker';
import { moment } from '../../helpers/moment';

describe('a run taken over, its calls of unknown cost', () => {
  let url: string;
  beforeAll(async () => {
    url = await testRedisUrl();
  });
  afterAll(() => releaseRedis());

  it("counts the first attempt's calls: the report says what Redis counts over both attempts", async () => {
    const prefix = uniquePrefix('takeoverunpriced');
    const redis = new Redis(url);
    const workers: BatchWorkerHandle[] = [];
    const agents: ScriptedAgent[] = [];
    const firstAtCall2 = moment("the first attempt's second call");
    const firstGate = moment('the first attempt let go');
    const reply = (last: boolean, gated: boolean): ScriptedReply => ({
      ...(last ? { text: 'done' } : { toolCalls: [{ id: 'c1', name: 'work', input: {} }] }),
      model: 'm',
      usage: { inputTokens: 1, outputTokens: 1 },
      ...(gated ? { delayMs: 1 } : {}),
    });
    const agent = (): ScriptedAgent => {
      const first = agents.length === 0;
      const made = createScriptedAgent({
        // The first attempt: one call answered, then one held until the test lets it go. The takeover: one call.
        replies: first ? [reply(false, false), reply(true, true)] : [reply(true, false)],
        tools: { work: { output: 'ok' } },
        sleep: async () => {
          firstAtCall2.reached();
          await firstGate.wait();
        },
      });
      agents.push(made);
      return made;
    };
    const start = (id: string) => lapsingWorker({ connection: url, prefix, workerId: id, agent, onError: () => {} });
    try {
      workers.push(start('first'));
      // No pricing and no cap: every answered call is of unknown cost, and nothing holds its worst case.
      const batch = await submitBatch([{ id: 't0', input: 'work' }], {
        connection: url,
        name: 'runs',
        prefix,
        retryLostRuns: 1,
      });
      const keys = batchKeys(prefix, 'runs', batch.batchId);
      await firstAtCall2.wait();
      expect(await redis.hget(keys.runUsage, '0:cn')).toBe('1');

      await lapseLock(redis, prefix);
      workers.push(start('takeover'));
      const report = await batch.report();
      expect(report.runs[0]).toMatchObject({ id: 't0', outcome: 'end_of_turn', attempt: 2, worker: 'takeover' });
      // One call by the first attempt, one by the takeover: the takeover's own records count one.
      expect(await redis.hget(keys.runUsage, '0:cn')).toBe('2');
      expect(report.runs[0]!.usage).toMatchObject({ costUsd: 0, unpricedCalls: 2 });
      expect(report.totals.unpricedCalls).toBe(2);
      const attached = await attachBatch({ connection: url, name: 'runs', prefix, batchId: batch.batchId });
      expect((await attached.report()).runs[0]!.usage.unpricedCalls).toBe(2);
    } finally {
      firstGate.reached();
      await Promise.all(workers.map((w) => w.close()));
      redis.disconnect();
      await deletePrefix(url, prefix);
    }
  }, 60_000);
});
