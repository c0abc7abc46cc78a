// agent-state-machine/bullmq: batches spread over worker processes and machines, on BullMQ and Redis.
export { submitBatch } from './submitBatch';
export type {
  SubmitBatchOptions,
  DistributedTask,
  DistributedRunReport,
  DistributedBatchReport,
  BatchHandle,
} from './submitBatch';
export { startBatchWorker } from './startBatchWorker';
export type { BatchWorkerOptions, BatchWorkerHandle } from './startBatchWorker';
export { RedisBudget } from './RedisBudget';
export { WorkerLostError } from './WorkerLostError';
export type { PriceTable } from './PriceTable';
export type { RedisConnection } from './connection';
