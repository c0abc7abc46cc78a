// The names each entry point of the distributed batch takes, checked against its options type by
// assertKnownOptions so that they cannot drift, and the options elsewhere that it cannot take, with why.

export const WORKER_OPTION_KEYS = Object.freeze({
  connection: true,
  name: true,
  prefix: true,
  agent: true,
  run: true,
  concurrency: true,
  historyDir: true,
  store: true,
  journal: true,
  workerId: true,
  pricing: true,
  lockDurationMs: true,
  stalledIntervalMs: true,
  onError: true,
  redisTimeoutMs: true,
  closeTimeoutMs: true,
  approve: true,
  approvalTimeoutMs: true,
  resumeTools: true,
});

export const SUBMIT_OPTION_KEYS = Object.freeze({
  connection: true,
  name: true,
  prefix: true,
  perRun: true,
  total: true,
  retry: true,
  pricing: true,
  retryLostRuns: true,
  cancelGraceMs: true,
  signal: true,
  onProgress: true,
  onPause: true,
  onApproval: true,
  pollMs: true,
  keepKeys: true,
  batchId: true,
  timeoutMs: true,
  expireAfterMs: true,
  reportFile: true,
  store: true,
  approve: true,
  approvalTimeoutMs: true,
});

export const ATTACH_OPTION_KEYS = Object.freeze({
  connection: true,
  name: true,
  prefix: true,
  batchId: true,
  onProgress: true,
  onApproval: true,
  pollMs: true,
  timeoutMs: true,
  expireAfterMs: true,
  reportFile: true,
  signal: true,
});

const PER_WORKER = 'each worker writes its own runs, so give it to startBatchWorker()';

/** runBatch() options a distributed batch's producer does not take, with why and where they go instead. */
export const SUBMIT_CANNOT: Readonly<Record<string, string>> = Object.freeze({
  historyDir: PER_WORKER,
  journal: PER_WORKER,
  concurrency: 'each worker has its own concurrency: give it to startBatchWorker()',
  resume:
    'a distributed batch goes on by being attached (attachBatch({ batchId })) or submitted again with its batchId',
  table: 'the worker runs the default table',
  compact: 'the worker does not compact runs yet',
  resumeTools:
    'the runs a worker takes over are continued by that worker: give the policy to startBatchWorker() (the same to each worker)',
  progress: 'the producer draws no progress line: follow the batch with `onProgress` (its figures are the same)',
});

/** runBatch() and adapter options a worker does not take, with why. */
export const WORKER_CANNOT: Readonly<Record<string, string>> = Object.freeze({
  onApproval: 'the answers come from whoever follows the batch: give it to submitBatch() or attachBatch()',
  table: 'the worker runs the default table',
  compact: 'the worker does not compact runs yet',
  perRun: "the batch's limits are the producer's: give them to submitBatch()",
  total: "the batch's limits are the producer's: give them to submitBatch()",
  retry: "retries are the producer's setting: give them to submitBatch()",
});
