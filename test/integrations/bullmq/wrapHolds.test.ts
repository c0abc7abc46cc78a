// The final-call holds of `total.wrapUp` in the Redis budget, step by step with exact (binary)
// dollars: an ordinary call keeps its run's final hold beside it; one that does not fit beside
// every run's final hold is refused `wrapsUp`, the run's earlier hold kept; the final call takes
// that hold's place; settle() lets the rest go. Real Redis.
import { batchKeys } from '../../../lib/integrations/bullmq/batchKeys';
import { limitFields } from '../../../lib/integrations/bullmq/budgetFields';
import { RedisBudget } from '../../../lib/integrations/bullmq/index';
import { useFileRedis } from '../../helpers/redis';

const redis = useFileRedis('wrapholds');
const CAP = { maxCostUsd: 4, strict: true, wrapUp: true as const };

let n = 0;
async function batch(): Promise<ReturnType<typeof batchKeys>> {
  const keys = batchKeys(redis.prefix, 'q', `b${n++}`);
  await redis.client.hset(keys.budget, { st: Date.now(), ...limitFields(CAP) });
  return keys;
}

/** Held dollars in the batch's budget and each run's final hold, as Redis has them. */
async function holds(keys: ReturnType<typeof batchKeys>) {
  const held = Number((await redis.client.hget(keys.budget, 'hc')) ?? 0);
  const usage = await redis.client.hgetall(keys.runUsage);
  const finals = Object.fromEntries(
    Object.entries(usage)
      .filter(([k]) => k.endsWith(':hw'))
      .map(([k, v]) => [k, Number(v)]),
  );
  return { held, finals, spent: Number((await redis.client.hget(keys.budget, 'c')) ?? 0) };
}

describe("the Redis budget's final-call holds (total.wrapUp)", () => {
  it('keeps, refuses beside them, swaps for the final call, and lets go at settle', async () => {
    const keys = await batch();
    const a = new RedisBudget(redis.client, keys, CAP, 0);
    const b = new RedisBudget(redis.client, keys, CAP, 1);
    expect(a.endings).toEqual({ wrapUp: true });
    expect(a.holdsWrapUp).toBe(true);

    // a: a $1 call beside a $1 final hold; b likewise: $4 of $4 held.
    expect(await a.reserve('llm', { costUsd: 1, wrapUp: { keepUsd: 1 } })).toBeUndefined();
    expect(await b.reserve('llm', { costUsd: 1, wrapUp: { keepUsd: 1 } })).toBeUndefined();
    expect(await holds(keys)).toEqual({ held: 4, finals: { '0:hw': 1, '1:hw': 1 }, spent: 0 });

    // a's response: $0.5 charged, its $1 hold released (sent with its next step).
    await a.charge({ costUsd: 0.5 }, { costUsd: 1 });
    // a's next call ($1, beside a new final hold of $1.5) does not fit: $0.5 + $2 held + $0.5 more + $1 > $4.
    const refused = await a.reserve('llm', { costUsd: 1, wrapUp: { keepUsd: 1.5 } });
    expect(refused).toMatchObject({ limit: 'maxCostUsd', wrapsUp: true, hold: 1, max: 4 });
    expect(refused!.message).toMatch(/does not fit beside the final calls' holds: \$0\.5000 spent \+ \$3\.0000 held/);
    // Nothing counted, and a's earlier final hold stays for its final call.
    expect(await holds(keys)).toEqual({ held: 3, finals: { '0:hw': 1, '1:hw': 1 }, spent: 0.5 });

    // a's final call ($0.75) takes its final hold's place: it fits whatever b holds.
    expect(await a.reserve('llm', { costUsd: 0.75, wrapUp: { final: true } })).toBeUndefined();
    expect(await holds(keys)).toEqual({ held: 2.75, finals: { '1:hw': 1 }, spent: 0.5 });
    await a.charge({ costUsd: 0.5 }, { costUsd: 0.75 });
    await a.settle();
    expect(await holds(keys)).toEqual({ held: 2, finals: { '1:hw': 1 }, spent: 1 });

    // b ends without a final call: settle lets its final hold go with its last charge.
    await b.charge({ costUsd: 0.25 }, { costUsd: 1 });
    await b.settle();
    expect(await holds(keys)).toEqual({ held: 0, finals: {}, spent: 1.25 });
  });

  it("a batch with no dollar cap keeps no final hold; total.visible's figures are the batch's, from Redis", async () => {
    const keys = batchKeys(redis.prefix, 'q', `b${n++}`);
    const limits = { maxLlmCalls: 5, visible: true };
    await redis.client.hset(keys.budget, { st: Date.now(), ...limitFields(limits) });
    const a = new RedisBudget(redis.client, keys, limits, 0);
    expect(a.endings).toEqual({ visible: true });
    expect(await a.reserve('llm', { costUsd: 1, wrapUp: { keepUsd: 1 } })).toBeUndefined();
    expect((await holds(keys)).finals).toEqual({});
    await a.charge({ costUsd: 0.5 });
    const figures = await a.figures();
    expect(figures.limits).toEqual({ maxLlmCalls: 5, visible: true });
    expect(figures.usage).toMatchObject({ llmCalls: 1, costUsd: 0.5 });
  });
});
