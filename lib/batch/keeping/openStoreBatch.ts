import { randomBytes } from 'node:crypto';
import type { JsonlHistorySinkOptions } from '../../history/JsonlHistorySinkOptions';
import type { TransitionTable } from '../../machine/TransitionTable';
import type { BatchManifest } from './batchManifest';
import type { RunSink, RunStore, StoreBatch } from './RunStore';

/** A batch open in a store, and how its runs open their sinks there. */
export interface OpenStoreBatch {
  readonly batch: StoreBatch;
  /** What `runTask` takes as `openSink` for run `runId`, with the sink options a history file would get. */
  sinkFor(runId: string, options: JsonlHistorySinkOptions): (table: TransitionTable<string>) => Promise<RunSink>;
}

/**
 * Opens `runBatch`'s batch in its store (lock, clash check, manifest; with `resume`, the batch
 * already there and its manifest) before any run starts,
 * under the id given or a new one: the batch's start time and a random suffix, so that two
 * batches started in the same millisecond do not meet.
 */
export async function openStoreBatch(
  store: RunStore,
  batchId: string | undefined,
  overwrite: boolean,
  resume: boolean,
  manifest: Omit<BatchManifest, 'type' | 'version'>,
): Promise<OpenStoreBatch> {
  const id =
    batchId ?? `${new Date(manifest.startedAt).toISOString().replace(/[:.]/g, '-')}-${randomBytes(3).toString('hex')}`;
  const batch = await store.openBatch({
    batchId: id,
    owner: `runBatch in ${process.argv[1] ?? 'node'} (pid ${process.pid})`,
    overwrite,
    resume,
    manifest,
  });
  return {
    batch,
    sinkFor: (runId, options) => (table) => batch.openRun(runId, options, table),
  };
}
