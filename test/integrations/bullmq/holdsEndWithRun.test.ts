// No hold outlives its run (spin's LEAK invariant, lib/integrations/bullmq/model): a reservation
// whose reply was lost — it timed out, yet Redis ran it — is let go by the run's settle(); a run
// reported lost has its calls' holds charged as uncertain and every hold let go (writeOff). Real
// Redis, behind a proxy that holds its replies back.
import { Redis } from 'ioredis';
import { batchKeys } from '../../../lib/integrations/bullmq/batchKeys';
import { limitFields } from '../../../lib/integrations/bullmq/budgetFields';
import { RedisBudget } from '../../../lib/integrations/bullmq/index';
import { lostReport } from '../../../lib/integrations/bullmq/runRecords';
import { useFileRedis } from '../../helpers/redis';
import { startTcpProxy } from '../../helpers/tcpProxy';

const redis = useFileRedis('holdsend');
const CAP = { maxCostUsd: 4, strict: true, wrapUp: true as const };

let n = 0;
async function batch(): Promise<ReturnType<typeof batchKeys>> {
  const keys = batchKeys(redis.prefix, 'q', `b${n++}`);
  await redis.client.hset(keys.budget, { st: Date.now(), ...limitFields(CAP) });
  return keys;
}

/** The batch's held and spent dollars (billed + uncertain, and the uncertain part), and run 0's holds. */
async function money(keys: ReturnType<typeof batchKeys>) {
  const [held, spent, uncertain] = await redis.client.hmget(keys.budget, 'hc', 'c', 'cu');
  const [runHeld, runFinal] = await redis.client.hmget(keys.runUsage, '0:hc', '0:hw');
  return {
    held: Number(held ?? 0),
    spent: Number(spent ?? 0),
    uncertain: Number(uncertain ?? 0),
    run: { held: runHeld, final: runFinal },
  };
}

describe('no hold outlives its run in the Redis budget', () => {
  it("a reservation whose reply never came (a timeout, Redis ran it) is let go by the run's settle", async () => {
    const proxy = await startTcpProxy(redis.url);
    const client = new Redis(proxy.url);
    try {
      const keys = await batch();
      const budget = new RedisBudget(client, keys, CAP, 0, { timeoutMs: 300 });
      // The step script is in Redis's cache before the replies stop (else its EVAL would wait for a NOSCRIPT).
      expect(await budget.reserve('tool')).toBeUndefined();
      proxy.hold();
      await expect(budget.reserve('llm', { costUsd: 1 })).rejects.toThrow(/RedisBudget\.reserve\('llm'\)/);
      // Redis ran it: $1 held for a call that was never made.
      expect(await money(keys)).toEqual({ held: 1, spent: 0, uncertain: 0, run: { held: '1', final: null } });
      proxy.release();
      expect(await budget.settle()).toBeUndefined();
      expect(await money(keys)).toEqual({ held: 0, spent: 0, uncertain: 0, run: { held: null, final: null } });
    } finally {
      client.disconnect();
      await proxy.close();
    }
  });

  it("settle lets go of the run's holds only: another run's stay", async () => {
    const keys = await batch();
    const a = new RedisBudget(redis.client, keys, CAP, 0);
    const b = new RedisBudget(redis.client, keys, CAP, 1);
    expect(await a.reserve('llm', { costUsd: 1, wrapUp: { keepUsd: 0.5 } })).toBeUndefined();
    expect(await b.reserve('llm', { costUsd: 1 })).toBeUndefined();
    await a.charge({ costUsd: 0.25 }, { costUsd: 1 });
    await a.settle();
    expect(await money(keys)).toEqual({ held: 1, spent: 0.25, uncertain: 0, run: { held: null, final: null } });
  });

  it("a run written off as lost: its calls' holds charged as uncertain, its final-call hold let go, nothing held", async () => {
    const keys = await batch();
    const lostWorker = new RedisBudget(redis.client, keys, CAP, 0);
    const other = new RedisBudget(redis.client, keys, CAP, 1);
    // The lost attempt: a $1 call in flight beside a $0.5 final-call hold; another run holds $1.
    expect(await lostWorker.reserve('llm', { costUsd: 1, wrapUp: { keepUsd: 0.5 } })).toBeUndefined();
    expect(await other.reserve('llm', { costUsd: 1 })).toBeUndefined();
    expect(await money(keys)).toMatchObject({ held: 2.5, spent: 0 });

    // The worker that finds it lost (begin answered 'lost').
    await new RedisBudget(redis.client, keys, CAP, 0).writeOff();
    expect(await money(keys)).toEqual({ held: 1, spent: 1, uncertain: 1, run: { held: null, final: null } });
    expect(await redis.client.hmget(keys.runUsage, '0:c', '0:cu')).toEqual(['1', '1']);
    // Its report says that money, the credit as uncertain with why: the runs' reports add up to Redis.
    const report = await lostReport(redis.client, keys, 0, 't0', { w: 'w1', a: 1 });
    expect(report).toMatchObject({ outcome: 'error', usage: { costUsd: 1, uncertainUsd: 1 }, attempt: 1 });
    expect(report.uncertain).toEqual([
      {
        why: "written off: attempt 1's call held at its worst case, its charge never reached the batch's budget",
        calls: 1,
      },
    ]);
  });
});
