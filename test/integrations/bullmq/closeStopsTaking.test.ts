import { Redis } from 'ioredis';
import { startBatchWorker, submitBatch, type BatchWorkerHandle } from '../../../lib/integrations/bullmq/index';
import { startOwnRedis, type OwnRedis } from '../../helpers/redis';
import { agentFromPayload } from './fixtures/agentFromPayload';
import { gatedAgents } from './fixtures/gatedAgent';

// A redis-server of this file's own. The closing worker's runs wait at a gate the test opens,
// so the test knows what close() met: both slots busy and jobs queued, or a slot free and
// BullMQ blocked waiting for a job (seen in CLIENT LIST) when the next one arrives.
let redis: OwnRedis;
const workers: BatchWorkerHandle[] = [];
beforeAll(async () => {
  redis = await startOwnRedis();
});
// Each test's workers are closed after it, so that the next one's are the only clients BullMQ blocks.
afterEach(async () => {
  await Promise.all(workers.splice(0).map((w) => w.close()));
}, 60_000);
afterAll(async () => {
  await redis.stop();
});

/** Resolves once a client of `url` is blocked in BZPOPMIN: BullMQ waiting for a job to arrive. */
async function blockedOnQueue(url: string): Promise<void> {
  const client = new Redis(url);
  try {
    for (;;) {
      const clients = (await client.client('LIST')) as string;
      if (/ cmd=bzpopmin /.test(clients)) return;
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  } finally {
    client.disconnect();
  }
}

describe("a closing worker's queue", () => {
  it('close() lets the runs in flight end and takes no new job; the jobs left are run by another worker', async () => {
    const gated = gatedAgents({ steps: 2 });
    const closing = startBatchWorker({
      connection: redis.url,
      name: 'q',
      concurrency: 2,
      agent: () => gated.agent(),
      onError: false,
    });
    workers.push(closing);
    await closing.ready;
    const tasks = Array.from({ length: 10 }, (_, i) => ({ id: `t${i}`, input: `task ${i}` }));
    const batch = await submitBatch(tasks, {
      connection: redis.url,
      name: 'q',
      total: { maxCostUsd: 10, strict: false },
    });
    await gated.arrived(2);

    const closed = closing.close();
    gated.open();
    await closed;
    // Its two runs ended; before the fix it went on taking the eight queued jobs until the queue was empty.
    expect(gated.agents.length).toBe(2);

    let taken = 0;
    workers.push(
      startBatchWorker({
        connection: redis.url,
        name: 'q',
        concurrency: 4,
        agent: (task) => {
          taken += 1;
          return agentFromPayload(task.payload);
        },
        onError: false,
      }),
    );
    const report = await batch.report();
    expect(taken).toBe(8);
    expect(report.runs).toHaveLength(10);
    expect(report.totals.outcomes.end_of_turn).toBe(10);
  }, 30_000);

  it('a job BullMQ was already waiting for when close() began is handed back, not run', async () => {
    const gated = gatedAgents({ steps: 2 });
    // A slot to spare: with both runs at the gate, BullMQ blocks on the queue, waiting for a third job.
    const closing = startBatchWorker({
      connection: redis.url,
      name: 'q2',
      concurrency: 3,
      agent: () => gated.agent(),
      onError: false,
    });
    workers.push(closing);
    await closing.ready;
    const submit = (ids: string[]) =>
      submitBatch(
        ids.map((id) => ({ id, input: `task ${id}` })),
        { connection: redis.url, name: 'q2', total: { maxCostUsd: 10, strict: false } },
      );
    const first = await submit(['a', 'b']);
    await gated.arrived(2);
    await blockedOnQueue(redis.url);

    const closed = closing.close();
    // Arrives while BullMQ's blocking wait is under way: that wait still hands the job over.
    const second = await submit(['c']);
    gated.open();
    await closed;
    expect(gated.agents.length).toBe(2);
    expect((await first.report()).totals.outcomes.end_of_turn).toBe(2);

    let taken = 0;
    workers.push(
      startBatchWorker({
        connection: redis.url,
        name: 'q2',
        agent: (task) => {
          taken += 1;
          return agentFromPayload(task.payload);
        },
        onError: false,
      }),
    );
    const report = await second.report();
    expect(taken).toBe(1);
    expect(report.runs.map((r) => [r.id, r.outcome])).toEqual([['c', 'end_of_turn']]);
  }, 30_000);
});
