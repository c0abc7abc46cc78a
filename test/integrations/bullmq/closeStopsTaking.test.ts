import { startBatchWorker, submitBatch, type BatchWorkerHandle } from '../../../lib/integrations/bullmq/index';
import { startOwnRedis, type OwnRedis } from '../../helpers/redis';
import { agentFromPayload } from './fixtures/agentFromPayload';
import { gatedAgents } from './fixtures/gatedAgent';

// A redis-server of this file's own. The closing worker's runs wait at a gate the test opens,
// so the test knows close() began while both of its slots were busy and the queue was not empty.
let redis: OwnRedis;
const workers: BatchWorkerHandle[] = [];
beforeAll(async () => {
  redis = await startOwnRedis();
});
afterAll(async () => {
  await Promise.all(workers.map((w) => w.close()));
  await redis.stop();
}, 60_000);

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
});
