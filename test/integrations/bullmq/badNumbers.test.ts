import { createScriptedAgent, InvalidArgumentError } from 'agent-state-machine';
import { CHARGE_FIELD_NAMES } from '../../../lib/internal/fieldLists';
import { batchKeys } from '../../../lib/integrations/bullmq/batchKeys';
import { CALL_CODES } from '../../../lib/integrations/bullmq/budgetFields';
import { RedisBudget, startBatchWorker, submitBatch } from '../../../lib/integrations/bullmq/index';
import { runScript } from '../../../lib/integrations/bullmq/redisScripts';
import { deletePrefix, uniquePrefix, useFileRedis } from '../../helpers/redis';

const redis = useFileRedis('bad');

let n = 0;
async function freshBudget(): Promise<ReturnType<typeof batchKeys>> {
  const keys = batchKeys(redis.prefix, 'q', `b${n++}`);
  await redis.client.hset(keys.budget, { st: Date.now(), mc: 5 });
  return keys;
}

describe('bad numbers are refused where they enter', () => {
  it.each([NaN, Infinity, -1, 1e308, '3'])(
    'RedisBudget.charge refuses %p, naming the field, and writes nothing',
    async (bad) => {
      const keys = await freshBudget();
      const budget = new RedisBudget(redis.client, keys, { maxCostUsd: 5 }, 0);
      await expect(budget.charge({ inputTokens: bad as number })).rejects.toThrow(InvalidArgumentError);
      await expect(budget.charge({ costUsd: bad as number })).rejects.toThrow(/delta\.costUsd/);
      await expect(budget.reserve('llm', { costUsd: bad as number })).rejects.toThrow(/hold\.costUsd/);
      expect(await redis.client.hgetall(keys.runUsage)).toEqual({});
      expect(await redis.client.hget(keys.budget, 'c')).toBeNull();
    },
  );

  it.each(['1e308', 'nan', 'inf', '-1', 'abc', ''])(
    'the step script refuses %p with a clear reply, writing nothing',
    async (bad) => {
      const keys = await freshBudget();
      const args = [0, ...CHARGE_FIELD_NAMES.map((_, i) => (i === 0 ? bad : 0)), 0, 0, CALL_CODES.llm, 0];
      const reply = (await runScript(redis.client, 'asmStep', [keys.budget, keys.runUsage], args)) as string[];
      expect(reply[0]).toBe('!bad');
      expect(reply[1]).toMatch(/expected a non-negative number keeping its total within 9007199254740991/);
      expect(await redis.client.hget(keys.budget, CALL_CODES.llm)).toBeNull();
      expect(await redis.client.hgetall(keys.runUsage)).toEqual({});
    },
  );

  it('a total that would pass 2^53 − 1 is refused in Redis, the counter kept as it was', async () => {
    const keys = await freshBudget();
    const budget = new RedisBudget(redis.client, keys, { maxCostUsd: 5 }, 0);
    await budget.charge({ inputTokens: 5e15 });
    await expect(budget.charge({ inputTokens: 5e15 })).rejects.toThrow(/Redis refused total inputTokens/);
    expect(await redis.client.hget(keys.budget, 'i')).toBe('5000000000000000');
  });

  it('a run reporting 1e308 tokens or dollars ends as an error saying so; the batch report still comes back', async () => {
    const p = uniquePrefix('badrun');
    const worker = startBatchWorker({
      connection: redis.url,
      name: 'q',
      prefix: p,
      onError: false,
      agent: (task) =>
        createScriptedAgent({
          replies: [
            { toolCalls: [{ id: 'c', name: 'work', input: {} }], usage: task.payload as Record<string, number> },
            { text: 'done', usage: { inputTokens: 1, outputTokens: 1, costUsd: 0.01 } },
          ],
          tools: { work: { output: 'ok' } },
        }),
    });
    try {
      const report = await (
        await submitBatch(
          [
            { id: 'tokens', input: 'x', payload: { inputTokens: 1e308, outputTokens: 1, costUsd: 0.01 } },
            { id: 'dollars1', input: 'x', payload: { inputTokens: 1, outputTokens: 1, costUsd: 1e308 } },
            { id: 'dollars2', input: 'x', payload: { inputTokens: 1, outputTokens: 1, costUsd: 1e308 } },
          ],
          { connection: redis.url, name: 'q', prefix: p, total: { maxCostUsd: 100, strict: false } },
        )
      ).report();
      expect(report.runs.map((r) => r.outcome)).toEqual(['error', 'error', 'error']);
      // Refused where they first enter, the response's usage, before any charge reaches Redis.
      expect(report.runs[0]!.error?.message).toMatch(/usage\.inputTokens must be at most .*got 1e\+308/);
      expect(report.runs[1]!.error?.message).toMatch(/usage\.costUsd must be at most .*got 1e\+308/);
      // Only their valid fields reached the shared budget (the first run's $0.01): its counters stay exact.
      expect(report.budget.costUsd).toBeCloseTo(0.01, 10);
      expect(Number.isFinite(report.budget.inputTokens)).toBe(true);
    } finally {
      await worker.close();
      await deletePrefix(redis.url, p);
    }
  }, 30_000);
});
