/**
 * Batches beyond `runBatch` (which is in the main entry): the record stores a batch writes to
 * (`RunStore`: `FileStore`, a folder of batches, and `PostgresStore` of `agent-state-machine/postgres`), the batch folder's manifest and
 * lock, raising the cap of a batch paused at it from code (`requestRaise`).
 *
 * @module agent-state-machine/batch
 */
export type {
  RunStore,
  StoreBatch,
  StoreBatchOptions,
  RunSink,
  StoredBatch,
  StoredLines,
  StoredRun,
  StoredRunQuery,
  ApprovalAnswer,
  KeptAnswer,
} from '../batch/keeping/RunStore';
export { FileStore } from '../batch/keeping/FileStore';
export type { BatchManifest } from '../batch/keeping/batchManifest';
export { FolderLockedError } from '../batch/keeping/lockFolder';
export type { FolderOwner } from '../batch/keeping/lockFolder';
export { requestRaise } from '../batch/raises/requestRaise';
export type { RaiseRequest } from '../batch/keeping/raiseRequests';
export type { CapPause } from '../batch/keeping/capPause';
