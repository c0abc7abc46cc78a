import type { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { InvalidArgumentError, type CapRaise } from 'agent-state-machine';
import { formatUsd } from '../../internal/formatUsd';
import { raiseProblem } from '../../internal/raiseProblem';
import { raiseChannel, type BatchKeys } from './batchKeys';
import { runScript } from './redisScripts';

/**
 * Raises the dollar cap of a BullMQ batch paused at it (`total.whenSpent: 'pause'`) to
 * `maxCostUsd`, atomically in Redis (the cap, the raise count and the batch's events in one
 * script), then tells the workers (their parked runs try their call again) and brings back the
 * jobs of the tasks that waited. Refuses, naming the figures, a cap not above the one in force
 * (which is at least what is spent and held), a batch that does not pause, one that is gone or
 * stopped for good. `within` bounds each Redis operation.
 */
export async function raiseCap(
  batch: { redis: Redis; queue: Queue; keys: BatchKeys; prefix: string; name: string; batchId: string },
  limits: unknown,
  by: CapRaise['by'],
  within: <T>(what: string, operation: () => Promise<T>) => Promise<T>,
): Promise<CapRaise> {
  const maxCostUsd = checkedCap(limits);
  const { redis, queue, keys, prefix, name, batchId } = batch;
  const reply = (await within('raising its cap', () =>
    runScript(redis, 'asmRaise', [keys.budget, keys.events, keys.waiting], [String(maxCostUsd), JSON.stringify(by)]),
  )) as string[];
  switch (reply[0]) {
    case '!missing':
      throw new Error(
        `batch ${batchId}: its budget is not in Redis (${keys.budget}): never submitted, or its keys expired`,
      );
    case '!pause':
      throw new InvalidArgumentError(
        'batchId',
        `a batch submitted with total: { maxCostUsd, whenSpent: 'pause' } (batch ${batchId} stops at its cap: submit it again with a new total instead)`,
        batchId,
      );
    case '!tripped':
      throw new Error(
        `batch ${batchId} has stopped for good: ${reply[1]}; a raise does not start it again (its strict cap could not be kept)`,
      );
    case '!low': {
      const [cap, spent, held] = reply.slice(1).map(Number) as [number, number, number];
      throw new InvalidArgumentError(
        'maxCostUsd',
        `a cap above the one in force (${formatUsd(cap)}, with ${formatUsd(spent)} spent and ${formatUsd(held)} held under it): a cap is raised, never lowered`,
        maxCostUsd,
      );
    }
  }
  const fromUsd = Number(reply[2]);
  await within('telling the workers', () => redis.publish(raiseChannel(prefix, name), batchId));
  // The tasks that waited for the raise: their jobs were delayed, and are due now.
  for (const index of reply.slice(4)) {
    const job = await within('reading a waiting job', () => queue.getJob(`${batchId}-${index}`));
    // A job gone or due already (it came back on its own) needs nothing.
    await job?.promote().catch(() => undefined);
  }
  return { at: Number(reply[3]), fromUsd, toUsd: maxCostUsd, by };
}

function checkedCap(limits: unknown): number {
  const problem = raiseProblem(limits);
  if (problem !== undefined) throw new InvalidArgumentError(problem.name, problem.expected, problem.value);
  return (limits as { maxCostUsd: number }).maxCostUsd;
}
