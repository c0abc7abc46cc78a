import { hostname } from 'node:os';
import { assertKnownOptions, assertPricing, resolveResumeTools } from 'agent-state-machine/internal';
import { InvalidArgumentError } from 'agent-state-machine';
import { WORKER_CANNOT, WORKER_OPTION_KEYS } from './optionKeys';
import { assertMs, assertQueueName } from './connection';
import { OPTION_DEFAULTS } from '../../internal/optionTable';
import { assertWorkerApproval } from './workerApprovals';
import type { BatchWorkerOptions } from './BatchWorkerOptions';

/** A worker's options, checked, with their defaults filled in. */
export interface WorkerSettings {
  connection: BatchWorkerOptions['connection'];
  name: string;
  prefix: string;
  agent: BatchWorkerOptions['agent'];
  /** A framework's loop instead of `agent`. */
  drive: BatchWorkerOptions['drive'];
  concurrency: number;
  historyDir: string | undefined;
  store: BatchWorkerOptions['store'];
  pricing: BatchWorkerOptions['pricing'];
  lockDurationMs: number;
  stalledIntervalMs: number;
  journal: NonNullable<BatchWorkerOptions['journal']>;
  redisTimeoutMs: number;
  closeTimeoutMs: number;
  approve: BatchWorkerOptions['approve'];
  approvalTimeoutMs: number | undefined;
  resumeTools: BatchWorkerOptions['resumeTools'];
  /** `workerId`, or one made of the host, the process and a random tail. */
  id: string;
  /** Where what goes wrong outside a run is said (`onError`, by default the console). */
  onError: (error: Error) => void;
}

/** Checks `startBatchWorker`'s options, each refused by name, and fills in their defaults. */
export function workerSettings(options: BatchWorkerOptions): WorkerSettings {
  if (typeof options !== 'object' || options === null)
    throw new InvalidArgumentError('options', 'an object { connection, name, agent, … }', options);
  assertKnownOptions(options, WORKER_OPTION_KEYS, 'startBatchWorker()', WORKER_CANNOT);
  const {
    connection,
    name,
    prefix = 'bull',
    agent,
    drive,
    concurrency = OPTION_DEFAULTS.concurrency,
    historyDir,
    store,
    pricing,
    lockDurationMs = OPTION_DEFAULTS.lockDurationMs,
    stalledIntervalMs = OPTION_DEFAULTS.stalledIntervalMs,
    journal = false,
    redisTimeoutMs = OPTION_DEFAULTS.redisTimeoutMs,
    closeTimeoutMs = OPTION_DEFAULTS.closeTimeoutMs,
    approve,
    approvalTimeoutMs,
    resumeTools,
  } = options;
  assertMs('redisTimeoutMs', redisTimeoutMs);
  assertMs('closeTimeoutMs', closeTimeoutMs);
  const id = options.workerId ?? `${hostname()}:${process.pid}:${Math.random().toString(36).slice(2, 6)}`;
  assertQueueName(name);
  if (drive !== undefined) {
    if (typeof drive !== 'function')
      throw new InvalidArgumentError('drive', 'a function (task, mirror, { signal, batchId }) => Promise', drive);
    if (agent !== undefined)
      throw new InvalidArgumentError('agent', 'left out when `drive` is given (give one of them)', agent);
  } else if (typeof agent !== 'function')
    throw new InvalidArgumentError('agent', 'a function (task, { signal }) => AgentLoop', agent);
  assertWorkerApproval(approve, approvalTimeoutMs, drive !== undefined);
  resolveResumeTools(resumeTools);
  if (!(Number.isInteger(concurrency) && concurrency > 0))
    throw new InvalidArgumentError('concurrency', 'a positive integer', concurrency);
  if (historyDir !== undefined && (typeof historyDir !== 'string' || historyDir === ''))
    throw new InvalidArgumentError('historyDir', 'a directory path', historyDir);
  if (store !== undefined && (typeof store !== 'object' || store === null || typeof store.openBatch !== 'function'))
    throw new InvalidArgumentError('store', 'a RunStore (new PostgresStore(url))', store);
  if (store !== undefined && historyDir !== undefined)
    throw new InvalidArgumentError(
      'historyDir',
      "left out beside `store`: each run's records go to one place (give `historyDir` or `store`)",
      historyDir,
    );
  if (journal !== false && historyDir === undefined && store === undefined)
    throw new InvalidArgumentError(
      'journal',
      "left out (or false) unless `historyDir` or `store` is set: the journal is kept in each run's records",
      journal,
    );
  if (resumeTools !== undefined && (store === undefined || journal === false))
    throw new InvalidArgumentError(
      'resumeTools',
      'left out unless `store` and `journal` are set: only a run taken over with its journal in a store continues (with neither, it restarts and no recorded call is served)',
      resumeTools,
    );
  if (typeof id !== 'string' || id === '') throw new InvalidArgumentError('workerId', 'a non-empty string', id);
  assertPricing(pricing);
  for (const [key, value] of [
    ['lockDurationMs', lockDurationMs],
    ['stalledIntervalMs', stalledIntervalMs],
  ] as const) {
    if (!(Number.isInteger(value) && value > 0))
      throw new InvalidArgumentError(key, 'a positive integer of milliseconds', value);
  }
  // The documented default: a worker has nowhere else to say what went wrong outside a run.
  // eslint-disable-next-line no-console -- see above
  const report = (error: Error): void => console.error(`batch worker ${id}: ${error.message}`);
  const onError = options.onError === false ? () => undefined : (options.onError ?? report);
  return {
    connection,
    name,
    prefix,
    agent,
    drive,
    concurrency,
    historyDir,
    store,
    pricing,
    lockDurationMs,
    stalledIntervalMs,
    journal,
    redisTimeoutMs,
    closeTimeoutMs,
    approve,
    approvalTimeoutMs,
    resumeTools,
    id,
    onError,
  };
}
