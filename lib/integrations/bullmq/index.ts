/**
 * Batches spread over worker processes and machines, on BullMQ and Redis.
 *
 * @module agent-state-machine/bullmq
 */
export { submitBatch } from './submitBatch';
export type {
  SubmitBatchOptions,
  DistributedTask,
  DistributedRunReport,
  DistributedBatchReport,
  BatchHandle,
} from './submitBatch';
export { attachBatch } from './attachBatch';
export type { AttachBatchOptions } from './attachBatch';
export type { DistributedApprovalRequest } from './approvalNotice';
export { startBatchWorker } from './startBatchWorker';
export type { BatchWorkerOptions, BatchWorkerHandle } from './startBatchWorker';
export { RedisBudget } from './RedisBudget';
export type { RedisBudgetOptions } from './RedisBudget';
export { RedisUnreachableError } from './RedisUnreachableError';
export { WorkerLostError } from './WorkerLostError';
export { TakenOverError } from './TakenOverError';
export type { PriceTable } from './PriceTable';
export type { RedisConnection } from './connection';
export { raiseBatch } from './raiseBatch';
export type { RaiseBatchOptions } from './raiseBatch';
export { readBatchApprovals } from './readBatchApprovals';
export type { BatchApprovals, BatchWaitingCall, BatchPlaceOptions } from './readBatchApprovals';
export { answerBatchApproval } from './answerBatchApproval';
export type { AnswerBatchApprovalOptions } from './answerBatchApproval';
