import type { Queue } from 'bullmq';
import type { DistributedTask } from './DistributedTask';

/** How many times BullMQ hands out a job whose worker could not reach Redis to start or report it. */
const JOB_ATTEMPTS = 1000;

/** Queues a job for each task of batch `batchId` not reported yet, a thousand per round trip. */
export async function queueTasks(
  queue: Queue,
  batchId: string,
  list: readonly DistributedTask[],
  reported: ReadonlySet<number>,
  within: <T>(what: string, operation: () => Promise<T>) => Promise<T>,
): Promise<void> {
  for (let from = 0; from < list.length; from += 1000) {
    const jobs: Parameters<Queue['addBulk']>[0] = [];
    for (let i = from; i < Math.min(list.length, from + 1000); i++) {
      if (reported.has(i)) continue;
      // The same job id as before, on a resume: BullMQ adds no second job while the first is there.
      jobs.push({
        name: 'run',
        data: { batchId, index: i, task: list[i]! },
        // A job fails only when Redis failed the worker (a run's own errors are its report):
        // it comes back, and its `begin` decides what is left to do.
        opts: {
          jobId: `${batchId}-${i}`,
          removeOnComplete: true,
          removeOnFail: true,
          attempts: JOB_ATTEMPTS,
          backoff: { type: 'fixed', delay: 1000 },
        },
      });
    }
    if (jobs.length > 0) await within('queueing tasks', () => queue.addBulk(jobs));
  }
}
