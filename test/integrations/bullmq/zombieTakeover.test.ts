// A worker whose job lock expired while it lives on (a zombie, issue 55), beside the attempt that
// took its run over: the takeover charges the zombie's holds, and STEP fences it — its charges
// count (taking the place of those holds), its reservations and releases are refused. Real Redis;
// first the model's counterexample (lib/integrations/bullmq/model, `run.sh broken-no-fence`) step
// by step on two attempts' budgets, then two real workers, the lock's expiry at a moment the test
// picks (it deletes the lock key BullMQ would let lapse; its lock duration is far too long to lapse
// on its own).
import { createScriptedAgent, type ScriptedAgent, type ScriptedReply } from 'agent-state-machine';
import { Redis } from 'ioredis';
import { batchKeys } from '../../../lib/integrations/bullmq/batchKeys';
import { limitFields } from '../../../lib/integrations/bullmq/budgetFields';
import {
  attachBatch,
  RedisBudget,
  submitBatch,
  type BatchWorkerHandle,
  type DistributedTask,
  type PriceTable,
} from '../../../lib/integrations/bullmq/index';
import { TakenOverError } from '../../../lib/integrations/bullmq/TakenOverError';
import { deletePrefix, releaseRedis, testRedisUrl, uniquePrefix, useFileRedis } from '../../helpers/redis';
import { lapseLock, lapsingWorker } from '../../helpers/lapsingWorker';
import { moment, until } from '../../helpers/moment';

// $1 an output token, input free: a call bounded at 2 output tokens holds $2, as in the model.
const PRICES: PriceTable = { '*': { inputPerMTok: 0, outputPerMTok: 1e6 } };
const CAP = { maxCostUsd: 5, strict: true };

/** The batch's billed + uncertain dollars, its uncertain part, and what it holds ('hc': null when nothing). */
async function money(redis: Redis, keys: ReturnType<typeof batchKeys>) {
  const [spent, uncertain, held] = await redis.hmget(keys.budget, 'c', 'cu', 'hc');
  return { spent: Number(spent ?? 0), uncertain: Number(uncertain ?? 0), held };
}

describe("the model's zombie counterexample, on two attempts' budgets", () => {
  const redis = useFileRedis('zombiesteps');

  it("the takeover charges the zombie's hold, and the zombie's settle lets go of nothing: at most $5 may be billed under the $5 cap", async () => {
    const keys = batchKeys(redis.prefix, 'q', 'b');
    await redis.client.hset(keys.budget, { st: Date.now(), ...limitFields(CAP) });
    const zombie = new RedisBudget(redis.client, keys, CAP, 0, { attempt: 1, deferCharges: true });
    const other = new RedisBudget(redis.client, keys, CAP, 1);
    // What the providers may bill at worst: each call in flight at its hold, each answered at its price.
    let worst = 0;
    const send = (hold: number) => (worst += hold);
    const answer = (hold: number, price: number) => (worst += price - hold);

    // The zombie's first call is billed $1 (its charge deferred), its second reserved ($2 held).
    expect(await zombie.reserve('llm', { costUsd: 2 })).toBeUndefined();
    send(2);
    answer(2, 1);
    await zombie.charge({ costUsd: 1 }, { costUsd: 2 });
    expect(await zombie.reserve('llm', { costUsd: 2 })).toBeUndefined();
    expect(await money(redis.client, keys)).toEqual({ spent: 1, uncertain: 0, held: '2' });

    // Its lock expires; attempt 2 read the store before the zombie wrote its second reserve line
    // (nothing missing), and takes the run over: the hold is charged as uncertain, not let go.
    const takeover = new RedisBudget(redis.client, keys, CAP, 0, { attempt: 2, deferCharges: true });
    await takeover.takeOver({});
    expect(await money(redis.client, keys)).toEqual({ spent: 3, uncertain: 2, held: null });
    // The zombie's call leaves anyway.
    send(2);
    // The attempt that took over fits its call: $3 + $2 = the cap.
    expect(await takeover.reserve('llm', { costUsd: 2 })).toBeUndefined();
    send(2);
    expect(worst).toBeLessThanOrEqual(CAP.maxCostUsd);

    // The zombie's call is billed $1; its settle charges it, in place of the hold the takeover
    // charged, and lets go of nothing — the other attempt's hold stays.
    answer(2, 1);
    await zombie.charge({ costUsd: 1 }, { costUsd: 2 });
    expect(await zombie.settle()).toBeUndefined();
    expect(await money(redis.client, keys)).toEqual({ spent: 2, uncertain: 0, held: '2' });
    // Nor does it reserve again: the call is not made, and the error names the takeover.
    const refused = zombie.reserve('llm', { costUsd: 2 });
    await expect(refused).rejects.toThrow(TakenOverError);
    await expect(refused).rejects.toThrow(/attempt 1 was taken over by attempt 2/);

    // Another run finds no room for a third call in flight ($2 billed + $2 held + $2 > $5).
    expect(await other.reserve('llm', { costUsd: 2 })).toMatchObject({ limit: 'maxCostUsd' });
    expect(worst).toBeLessThanOrEqual(CAP.maxCostUsd);
    answer(2, 2);
    await takeover.charge({ costUsd: 2 }, { costUsd: 2 });
    await takeover.settle();
    expect(await money(redis.client, keys)).toEqual({ spent: 4, uncertain: 0, held: null });
    expect(worst).toBe(4);
  });
});

/** The reason a taken-over run's report gives for its credit (takeoverCredit.ts). */
const CREDIT_WHY = "taken over: attempt 1's call held at its worst case, its charge never reached the batch's budget";

describe('a zombie worker beside the worker that took its run over (two real workers)', () => {
  let url: string;
  beforeAll(async () => {
    url = await testRedisUrl();
  });
  afterAll(() => releaseRedis());

  /**
   * One run, t0, on a zombie worker: $1, then a second call (`secondTokens` output tokens, $1
   * each, held at $2) gated, and a third call it must not make. Its lock is deleted at the second
   * call and a second worker takes the run over ($1, gated). The caller lets the gates go.
   */
  async function zombieScenario(prefix: string, secondTokens: number) {
    const redis = new Redis(url);
    const workers: BatchWorkerHandle[] = [];
    const problems: string[] = [];
    // The run's agents: its first attempt (the zombie's), then the one that takes it over.
    const agents: ScriptedAgent[] = [];
    const zombieAtCall2 = moment("the zombie's second call");
    const takeoverAtCall1 = moment("the takeover's first call");
    const gates = [moment('the zombie let go'), moment('the takeover let go')];
    const bound = { inputTokens: 1, maxOutputTokens: 2, model: 'm' };
    const reply = (outputTokens: number, last: boolean, gated: boolean): ScriptedReply => ({
      ...(last ? { text: 'done' } : { toolCalls: [{ id: `c${outputTokens}`, name: 'work', input: {} }] }),
      model: 'm',
      usage: { inputTokens: 1, outputTokens },
      ...(gated ? { delayMs: 1 } : {}),
    });
    const agent = (): ScriptedAgent => {
      const n = agents.length;
      const made = createScriptedAgent({
        // The zombie: $1, then the gated call, then a third call it must not make. The takeover: $1.
        replies:
          n === 0
            ? [reply(1, false, false), reply(secondTokens, false, true), reply(1, true, false)]
            : [reply(1, true, true)],
        bound,
        tools: { work: { output: 'ok' } },
        sleep: async () => {
          (n === 0 ? zombieAtCall2 : takeoverAtCall1).reached();
          await gates[n]!.wait();
        },
      });
      agents.push(made);
      return made;
    };
    const start = (id: string) =>
      lapsingWorker({
        connection: url,
        prefix,
        workerId: id,
        agent,
        onError: (error) => problems.push(`${id}: ${error.message}`),
      });
    workers.push(start('zombie'));
    const tasks: DistributedTask[] = [{ id: 't0', input: 'work' }];
    const batch = await submitBatch(tasks, {
      connection: url,
      name: 'runs',
      prefix,
      pricing: PRICES,
      retryLostRuns: 1,
      total: CAP,
    });
    const keys = batchKeys(prefix, 'runs', batch.batchId);
    const close = async () => {
      for (const gate of gates) gate.reached();
      await Promise.all(workers.map((w) => w.close()));
      redis.disconnect();
      await deletePrefix(url, prefix);
    };
    try {
      await zombieAtCall2.wait();
      expect(await money(redis, keys)).toEqual({ spent: 1, uncertain: 0, held: '2' });

      // The zombie's lock expires (its worker stalled, say): BullMQ's stalled check hands the job on.
      await lapseLock(redis, prefix);
      workers.push(start('takeover'));
      await takeoverAtCall1.wait();
      // The takeover charged the zombie's $2 hold as uncertain (the run's credit), then held its own call's $2.
      expect(await money(redis, keys)).toEqual({ spent: 3, uncertain: 2, held: '2' });
    } catch (error) {
      await close();
      throw error;
    }
    return { redis, workers, problems, agents, gates, batch, keys, close };
  }

  it('the zombie makes no call after the takeover, its report is dropped, Redis counts what was billed, never past the cap, and nothing is held', async () => {
    const { redis, workers, problems, agents, gates, batch, keys, close } = await zombieScenario(
      uniquePrefix('zombie'),
      2,
    );
    try {
      // The zombie's call answers ($2): its next reservation carries the charge, and is refused.
      gates[0]!.reached();
      await until('the zombie run ended', () => workers[0]!.running === 0);
      expect(agents[0]!.calls.filter((c) => c.op === 'sendToolResults' || c.op === 'sendUserMessage')).toHaveLength(2);
      // Its $2 counted in place of the hold charged for it; the takeover's $2 hold is still held.
      expect(await money(redis, keys)).toEqual({ spent: 3, uncertain: 0, held: '2' });
      await until('the zombie said why its report is dropped', () => problems.some((p) => /taken over/.test(p)));
      expect(problems.find((p) => p.startsWith('zombie: run t0'))).toMatch(
        /attempt 1 was taken over by a later attempt .*this result is dropped/,
      );

      gates[1]!.reached();
      const report = await batch.report();
      // Reported once, by the attempt that took the run over.
      expect(report.runs).toHaveLength(1);
      expect(report.runs[0]).toMatchObject({ id: 't0', outcome: 'end_of_turn', attempt: 2, worker: 'takeover' });
      // Billed: $1 + $2 by the zombie, $1 by the takeover; Redis counts exactly that, under the cap.
      const billed = 1 + 2 + 1;
      expect(await money(redis, keys)).toEqual({ spent: billed, uncertain: 0, held: null });
      expect(report.budget.costUsd + report.budget.uncertainUsd).toBeLessThanOrEqual(CAP.maxCostUsd);
      expect(await redis.hget(keys.budget, 'hc')).toBeNull();
      // The run's report says what Redis counts for it, every attempt's charges: the zombie's
      // charge took the credit's place before the report was written, so nothing is uncertain.
      expect(report.runs[0]!.usage).toMatchObject({ costUsd: billed, uncertainUsd: 0 });
      expect(report.runs[0]!.uncertain).toBeUndefined();
      expect(report.totals.costUsd).toBe(report.budget.costUsd);
    } finally {
      await close();
    }
  }, 60_000);

  it("the run taken over reports the zombie's hold as uncertain, with why; the zombie's charge after the report takes its place in Redis alone", async () => {
    // The zombie's second call is billed $1 of its $2 hold.
    const batchPrefix = uniquePrefix('zombiecredit');
    const { redis, workers, problems, gates, batch, keys, close } = await zombieScenario(batchPrefix, 1);
    try {
      // The takeover ends first: its report carries the credit, the zombie's call still unanswered.
      gates[1]!.reached();
      const report = await batch.report();
      expect(report.runs).toHaveLength(1);
      expect(report.runs[0]).toMatchObject({ id: 't0', outcome: 'end_of_turn', attempt: 2, worker: 'takeover' });
      // $1 billed by the zombie's first call, $2 of credit (uncertain, with why), $1 by the takeover.
      expect(report.runs[0]!.usage).toMatchObject({ costUsd: 4, uncertainUsd: 2 });
      expect(report.runs[0]!.uncertain).toEqual([{ why: CREDIT_WHY, calls: 1 }]);
      // Redis counts exactly what the run reports: billed + uncertain, and the uncertain part apart.
      expect(await money(redis, keys)).toEqual({ spent: 4, uncertain: 2, held: null });
      expect(report.budget).toMatchObject({ costUsd: 4, uncertainUsd: 2 });
      expect(report.totals).toMatchObject({ costUsd: 4, uncertainUsd: 2 });
      // What RECORD stored is that report.
      const stored = JSON.parse((await redis.hget(keys.results, '0'))!) as {
        usage: { costUsd: number; uncertainUsd: number };
        uncertain: unknown;
      };
      expect(stored).toMatchObject({
        usage: { costUsd: 4, uncertainUsd: 2 },
        uncertain: [{ why: CREDIT_WHY, calls: 1 }],
      });

      // Then the zombie's call answers, billed $1: its charge takes the $2 credit's place in Redis
      // (the call counted once), and its report is dropped. A report written cannot change: it
      // says $1 more than Redis now counts — exactly the credit taken back less the real charge.
      gates[0]!.reached();
      await until('the zombie run ended', () => workers[0]!.running === 0);
      expect(await money(redis, keys)).toEqual({ spent: 3, uncertain: 0, held: null });
      await until('the zombie said why its report is dropped', () => problems.some((p) => /taken over/.test(p)));
      const after = JSON.parse((await redis.hget(keys.results, '0'))!) as { usage: { costUsd: number } };
      expect(after.usage.costUsd - 3).toBe(2 - 1);
      // A report read now (a handle attached to the batch) says the run's money as Redis counts
      // it: the zombie's $1 billed in place of the credit, the totals equal to the budget again.
      const attached = await attachBatch({
        connection: url,
        name: 'runs',
        prefix: batchPrefix,
        batchId: batch.batchId,
      });
      const again = await attached.report();
      expect(again.runs[0]!.usage).toMatchObject({ costUsd: 3, uncertainUsd: 0 });
      expect(again.runs[0]!.uncertain).toBeUndefined();
      expect(again.totals).toMatchObject({ costUsd: 3, uncertainUsd: 0 });
      expect(again.budget).toMatchObject({ costUsd: 3, uncertainUsd: 0 });
    } finally {
      await close();
    }
  }, 60_000);
});
