// A response past its bound under a batch's strict cap kept in Redis: the cap cannot be kept (the
// server ignores max tokens), so the run that met it stops, and so does every other run of the
// batch, on any worker: the budget in Redis is tripped, and their next call is refused.
import { batchKeys } from '../../../lib/integrations/bullmq/batchKeys';
import { limitFields } from '../../../lib/integrations/bullmq/budgetFields';
import { RedisBudget } from '../../../lib/integrations/bullmq/index';
import type { Pricing } from '../../../lib/index';
import { drive } from '../../helpers/drive';
import { useFileRedis } from '../../helpers/redis';

const redis = useFileRedis('boundtrip');

// $1 per million input tokens, $4 per million output: a call's worst case is $0.0014.
const pricing: Pricing = (u) => (u.inputTokens ?? 0) * 1e-6 + (u.outputTokens ?? 0) * 4e-6;
const bound = { inputTokens: 1000, maxOutputTokens: 100, model: 'm' };
const ignoring = { text: 'ok', model: 'm', usage: { inputTokens: 1000, outputTokens: 1000 } };
const within = { text: 'ok', model: 'm', usage: { inputTokens: 1000, outputTokens: 100 } };
const CAP = { maxCostUsd: 1, strict: true };

let n = 0;
async function strictBatch(): Promise<ReturnType<typeof batchKeys>> {
  const keys = batchKeys(redis.prefix, 'q', `b${n++}`);
  await redis.client.hset(keys.budget, { st: Date.now(), ...limitFields(CAP) });
  return keys;
}

describe('a response past its bound under a strict cap in Redis', () => {
  it('trips the budget: every other run, on any client, meets the stop at its next call, which names why', async () => {
    const keys = await strictBatch();
    const a = new RedisBudget(redis.client, keys, CAP, 0);
    const b = new RedisBudget(redis.client, keys, CAP, 1);
    expect(a.strict).toBe(true);
    expect(new RedisBudget(redis.client, keys, { maxCostUsd: 1, strict: false }, 2).strict).toBe(false);
    expect(await b.reserve('llm', { costUsd: 0.1 })).toBeUndefined();
    await a.trip({ limit: 'maxCostUsd', used: 0.01, max: 1, message: 'the response used 1000 output tokens' });
    const refused = await b.reserve('llm', { costUsd: 0.1 });
    expect(refused).toMatchObject({ limit: 'maxCostUsd', max: 1 });
    expect(refused!.message).toBe("the batch's strict cap stopped every run: the response used 1000 output tokens");
    // A charge still lands (what was spent is counted) and says the batch stopped; the first reason stays.
    await a.trip({ limit: 'maxCostUsd', used: 0.02, max: 1, message: 'another' });
    expect((await b.charge({ costUsd: 0.05 }, { costUsd: 0.1 }))!.message).toMatch(/1000 output tokens$/);
    expect(Number(await redis.client.hget(keys.budget, 'c'))).toBeCloseTo(0.05, 10);
  });

  it('stops the adapter that met it, and the next run on another client makes no call', async () => {
    const keys = await strictBatch();
    // No cap in this process: the strict cap is the batch's, in Redis alone.
    const first = drive(
      { replies: [ignoring, within], bound },
      { pricing, externalBudgets: [new RedisBudget(redis.client, keys, CAP, 0)] },
    );
    const result = await first.adapter.runTurn('hi');
    expect(result.outcome).toBe('budget_exceeded');
    expect(result.error!.message).toMatch(/past its bound of 100 .*so the batch stops/);
    const second = drive(
      { replies: [within], bound },
      { pricing, externalBudgets: [new RedisBudget(redis.client, keys, CAP, 1)] },
    );
    const next = await second.adapter.runTurn('hi');
    expect(next.outcome).toBe('budget_exceeded');
    expect(next.error!.message).toMatch(
      /^the batch's strict cap stopped every run: the response used 1000 output tokens/,
    );
    expect(second.agent.calls.filter((c) => c.op === 'sendUserMessage')).toHaveLength(0);
  });

  it('with strict: false the overshoot is accepted and the batch goes on', async () => {
    const keys = batchKeys(redis.prefix, 'q', `b${n++}`);
    const plain = { maxCostUsd: 1, strict: false };
    await redis.client.hset(keys.budget, { st: Date.now(), ...limitFields(plain) });
    const first = drive(
      { replies: [ignoring], bound },
      { pricing, externalBudgets: [new RedisBudget(redis.client, keys, plain, 0)] },
    );
    expect((await first.adapter.runTurn('hi')).outcome).toBe('end_of_turn');
    const second = drive(
      { replies: [within], bound },
      { pricing, externalBudgets: [new RedisBudget(redis.client, keys, plain, 1)] },
    );
    expect((await second.adapter.runTurn('hi')).outcome).toBe('end_of_turn');
  });
});
