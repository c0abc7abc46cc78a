import { Worker } from 'bullmq';
import { asError } from '../../internal/asError';
import { abortChannel, approvalChannel, batchKeys, raiseChannel } from './batchKeys';
import { bounded, openRedis } from './connection';
import { openSubscriber } from './openSubscriber';
import { runApprovalsKey } from './approvalRecords';
import { WorkerStore } from './WorkerStore';
import type { BatchWorkerHandle, BatchWorkerOptions } from './BatchWorkerOptions';
import { JobProcessor } from './JobProcessor';
import type { JobData } from './runWorkerTask';
import { workerContext } from './WorkerContext';
import { workerSettings } from './workerSettings';

export type { BatchWorkerHandle, BatchWorkerOptions } from './BatchWorkerOptions';

/**
 * Starts a worker that runs the tasks of batches submitted to queue `name`: each as one turn
 * through its own `AgentWithStateMachine`, under the batch's per-run limits and its shared
 * budget in Redis (`RedisBudget`), cancelled when the batch is aborted, reported once.
 * Also takes part in finding runs whose worker was lost (BullMQ's stalled-job check).
 */
export function startBatchWorker(options: BatchWorkerOptions): BatchWorkerHandle {
  const settings = workerSettings(options);
  const { connection, name, prefix, concurrency, store, lockDurationMs, stalledIntervalMs, redisTimeoutMs } = settings;
  const { id, onError } = settings;

  const redis = openRedis(connection);
  const inStore = store === undefined ? undefined : new WorkerStore(store, redis);
  const processor = new JobProcessor(workerContext(settings, redis, inStore), (n) => {
    worker.concurrency = n;
  });
  const { watch } = processor;

  // Aborts reach every worker at once; a worker that was not listening finds the abort key when it takes the next job.
  // Raises and answered approval requests too; a worker that missed one finds it by polling (ParkWatch).
  const subscriber = openSubscriber(
    connection,
    {
      [abortChannel(prefix, name)]: (message) => {
        try {
          const { batchId, message: why } = JSON.parse(message) as { batchId: string; message: string };
          processor.abort(batchId, why);
        } catch (error) {
          onError(asError(error));
        }
      },
      [raiseChannel(prefix, name)]: (batchId) => watch.heard(batchKeys(prefix, name, batchId).budget),
      [approvalChannel(prefix, name)]: (message) => {
        // `<batch id>:<index>`: a batch id has no `:`.
        const at = message.lastIndexOf(':');
        watch.heardUnder(runApprovalsKey(batchKeys(prefix, name, message.slice(0, at)), Number(message.slice(at + 1))));
      },
    },
    onError,
  );

  const worker = new Worker<JobData>(name, processor.process, {
    connection: redis,
    prefix,
    concurrency,
    lockDuration: lockDurationMs,
    stalledInterval: stalledIntervalMs,
    // A stalled job always comes back to a worker: `begin` decides, with the batch's
    // `retryLostRuns`, whether it is re-run or reported lost — BullMQ must not fail it first.
    maxStalledCount: 1_000_000_000,
  });
  worker.on('error', (error) => {
    // While Redis restarts every reconnect attempt fails; the worker waits it out. Say what else goes wrong.
    if (!/ECONNREFUSED|ECONNRESET|Connection is closed/.test(error.message)) onError(error);
  });

  const ready = bounded(redis, `worker ${id}: connecting`, () => redis.ping(), redisTimeoutMs).then(
    () => undefined,
    (error: unknown) => {
      const failure = asError(error);
      onError(failure);
      throw failure;
    },
  );
  ready.catch(() => undefined);

  let closing: Promise<void> | undefined;
  return {
    id,
    ready,
    get running() {
      return processor.running;
    },
    close: () =>
      (closing ??= (async () => {
        const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms).unref());
        const idle = async (ms: number): Promise<void> => {
          const until = Date.now() + ms;
          while (processor.busy > 0 && Date.now() < until) await sleep(20);
        };
        // No new run from here on: BullMQ stops fetching (not waiting for the runs in flight, which
        // end below, and touching no Redis), and a job it still delivers, or one waiting for a
        // slot, goes back to the queue for another worker.
        await worker.pause(true).catch(() => undefined);
        processor.close();
        // Our own runs end first (they report themselves, each Redis step within redisTimeoutMs) …
        await idle(settings.closeTimeoutMs);
        // … or are cancelled, with a second to end.
        processor.cancelAll('the worker is closing');
        await idle(1000);
        // Then BullMQ, without waiting on its fetch loop, which can hang on a connection that went
        // through a Redis restart (or on a Redis that is gone): a second at most.
        await Promise.race([worker.close(true).catch(() => undefined), sleep(1000)]);
        processor.cancelAll('the worker is closing'); // a run still in flight (a new job is handed back, not begun)
        await idle(1000);
        watch.close();
        await inStore?.close();
        // QUIT lets replies still on their way arrive; a Redis that is away gets a second, then the socket is dropped.
        await Promise.race([Promise.all([redis.quit(), subscriber.quit()]).catch(() => undefined), sleep(1000)]);
        subscriber.disconnect();
        redis.disconnect();
      })()),
  };
}
