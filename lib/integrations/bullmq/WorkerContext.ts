import type { Redis } from 'ioredis';
import { APPROVAL_EXTENSION, DEFAULT_TABLE, extendTable, WRAP_UP_EXTENSION } from 'agent-state-machine';
import type { TransitionTable } from 'agent-state-machine';
import { bounded } from './connection';
import type { WorkerStore } from './WorkerStore';
import type { WorkerSettings } from './workerSettings';

/** What every job of a worker shares: its settings, its connection and store, and its tables. */
export interface WorkerContext {
  settings: WorkerSettings;
  redis: Redis;
  inStore: WorkerStore | undefined;
  /** One Redis operation of a run, within `redisTimeoutMs`. */
  within: <T>(what: string, operation: () => Promise<T>) => Promise<T>;
  /** The tables a run moves through: with the approval states when this worker asks approval. */
  tables: { plain: TransitionTable<string>; wrapUp: TransitionTable<string> };
}

/** The context of a worker's jobs, built once. */
export function workerContext(settings: WorkerSettings, redis: Redis, inStore: WorkerStore | undefined): WorkerContext {
  const plain: TransitionTable<string> =
    settings.approve === undefined ? DEFAULT_TABLE : extendTable(DEFAULT_TABLE, APPROVAL_EXTENSION);
  return {
    settings,
    redis,
    inStore,
    within: (what, operation) => bounded(redis, what, operation, settings.redisTimeoutMs),
    tables: { plain, wrapUp: extendTable(plain, WRAP_UP_EXTENSION) },
  };
}
