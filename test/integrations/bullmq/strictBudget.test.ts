import { execFile } from 'node:child_process';
import * as path from 'node:path';
import { promisify } from 'node:util';
import fc from 'fast-check';
import { Redis } from 'ioredis';
import { batchKeys } from '../../../lib/integrations/bullmq/batchKeys';
import { limitFields } from '../../../lib/integrations/bullmq/budgetFields';
import { RedisBudget } from '../../../lib/integrations/bullmq/index';
import { useFileRedis } from '../../helpers/redis';

const redis = useFileRedis('strict');

let n = 0;
async function strictBudget(cap: number): Promise<{ keys: ReturnType<typeof batchKeys>; batch: string }> {
  const batch = `b${n++}`;
  const keys = batchKeys(redis.prefix, 'q', batch);
  await redis.client.hset(keys.budget, { st: Date.now(), ...limitFields({ maxCostUsd: cap, strict: true }) });
  return { keys, batch };
}

/** Calls as [hold, actual ≤ hold], in cents so that sums are exact. */
const calls = fc.array(
  fc.tuple(fc.integer({ min: 1, max: 40 }), fc.integer({ min: 0, max: 100 })).map(([hold, pct]) => {
    const actual = Math.floor((hold * pct) / 100);
    return [hold / 100, actual / 100] as [number, number];
  }),
  { minLength: 1, maxLength: 25 },
);

describe('RedisBudget under a strict maxCostUsd', () => {
  it('holds each call’s worst case: a call that does not fit beside spend and holds is refused; a charge releases its hold', async () => {
    const { keys } = await strictBudget(1);
    const budget = new RedisBudget(redis.client, keys, { maxCostUsd: 1, strict: true }, 0);
    expect(budget.capsCost).toBe(true);
    expect(await budget.reserve('llm', { costUsd: 0.4 })).toBeUndefined();
    expect(await budget.reserve('llm', { costUsd: 0.4 })).toBeUndefined();
    expect(await budget.reserve('llm', { costUsd: 0.4 })).toEqual({
      limit: 'maxCostUsd',
      used: 0.8,
      max: 1,
      message:
        "shared budget: this LLM call's worst case $0.4000 does not fit under the strict cap: $0.0000 spent + $0.8000 held of $1.0000",
    });
    expect(await budget.charge({ costUsd: 0.1 }, { costUsd: 0.4 })).toBeUndefined();
    expect(await budget.reserve('llm', { costUsd: 0.4 })).toBeUndefined();
    expect(Number(await redis.client.hget(keys.budget, 'hc'))).toBeCloseTo(0.8, 10);
    // Tool calls hold no dollars; an LLM call with no worst case is not made.
    expect(await budget.reserve('tool')).toBeUndefined();
    await expect(budget.reserve('llm')).rejects.toThrow(/strict and this LLM call brought no worst-case cost/);
    // The per-run hold is kept too (a lost run's hold stays held: never under-counted).
    expect(Number(await redis.client.hget(keys.runUsage, '0:hc'))).toBeCloseTo(0.8, 10);
  });

  it('never lets spend pass the cap, from several clients at once (property-based)', async () => {
    const clients = Array.from({ length: 4 }, () => new Redis(redis.url));
    try {
      await fc.assert(
        fc.asyncProperty(
          fc.integer({ min: 0, max: 200 }),
          fc.array(calls, { minLength: 2, maxLength: 4 }),
          async (capCents, perClient) => {
            const cap = capCents / 100;
            const { keys } = await strictBudget(cap);
            await Promise.all(
              perClient.map(async (list, i) => {
                const budget = new RedisBudget(clients[i]!, keys, { maxCostUsd: cap, strict: true }, i);
                for (const [hold, actual] of list)
                  if ((await budget.reserve('llm', { costUsd: hold })) === undefined)
                    await budget.charge({ costUsd: actual }, { costUsd: hold });
              }),
            );
            const spent = Number((await redis.client.hget(keys.budget, 'c')) ?? 0);
            expect(spent).toBeLessThanOrEqual(cap + 1e-9);
            expect(await redis.client.hget(keys.budget, 'hc')).toBeNull();
          },
        ),
        { numRuns: 40 },
      );
    } finally {
      clients.forEach((c) => c.disconnect());
    }
  }, 30_000);

  it('never lets spend pass the cap across worker processes, the cap running out part-way', async () => {
    const cap = 1;
    const { keys, batch } = await strictBudget(cap);
    // Four processes, 30 calls each holding $0.05 and costing $0.02 to $0.05: $4+ asked of $1.
    const made = await Promise.all(
      [0, 1, 2, 3].map(async (run) => {
        const list = Array.from({ length: 30 }, (_, i) => [0.05, 0.02 + ((i + run) % 4) / 100] as const);
        const { stdout } = await promisify(execFile)(
          process.execPath,
          [
            '--import',
            'tsx',
            path.join(__dirname, 'fixtures/strictLoop.ts'),
            JSON.stringify({ url: redis.url, prefix: redis.prefix, batch, run, cap, calls: list }),
          ],
          { cwd: path.resolve(__dirname, '../../..') },
        );
        return Number(/made (\d+)/.exec(stdout)![1]);
      }),
    );
    const spent = Number(await redis.client.hget(keys.budget, 'c'));
    expect(spent).toBeLessThanOrEqual(cap);
    // Part-way: some calls were refused, and what is left is less than one call's hold.
    expect(made.reduce((a, b) => a + b, 0)).toBeLessThan(120);
    // At the last refusal, spend + holds (at most one per other process) left less than one hold.
    expect(spent).toBeGreaterThan(cap - 4 * 0.05);
    expect(await redis.client.hget(keys.budget, 'hc')).toBeNull();
  }, 30_000);
});
