import { storeBatchSource } from '../batch/reading/BatchSource';
import {
  readBatchFolder,
  readBatchSource,
  type BatchFolder,
  type BatchReadingOptions,
} from '../batch/reading/readBatchFolder';
import type { RunStore } from '../batch/keeping/RunStore';
import type { HistoryWarning } from '../history/HistoryEntry';
import { escapeControl } from '../internal/escapeControl';
import { folderRunFailed, formatBatchFolder } from './formatBatchFolder';

type InspectOptions = { json?: boolean; exitCode?: boolean; salvage?: boolean; maxLineBytes?: number };
type InspectIO = { stdout(text: string): void; stderr(text: string): void; warn(w: HistoryWarning): void };

/**
 * `agent-sm inspect <folder>`: the batch's runs, failures first, and its totals, as text or
 * (`json`) as the value `toJson` makes printable. Resolves to the exit code: 2 when a run file
 * could not be read (named on stderr), else 1 with `exitCode` when a run failed, else 0.
 */
export async function inspectFolder(
  dir: string,
  options: InspectOptions,
  io: InspectIO,
  toJson: (value: unknown) => string,
): Promise<number> {
  return inspectBatch(await readBatchFolder(dir, readingOf(options, io)), options, io, toJson);
}

/** `agent-sm inspect --store URL <batchId>`: the same for batch `batchId` of `store`. */
export async function inspectStoreBatch(
  store: RunStore,
  batchId: string,
  options: InspectOptions,
  io: InspectIO,
  toJson: (value: unknown) => string,
): Promise<number> {
  const batch = await readBatchSource(await storeBatchSource(store, batchId), readingOf(options, io));
  return inspectBatch(batch, options, io, toJson);
}

function readingOf(options: InspectOptions, io: InspectIO): BatchReadingOptions {
  return {
    ...(options.salvage === true ? { salvage: true } : {}),
    ...(options.maxLineBytes === undefined ? {} : { maxLineBytes: options.maxLineBytes }),
    onWarning: io.warn,
  };
}

async function inspectBatch(
  folder: BatchFolder,
  options: InspectOptions,
  io: InspectIO,
  toJson: (value: unknown) => string,
): Promise<number> {
  if (options.json === true) {
    const { manifest, dir: folderDir, ...rest } = folder;
    io.stdout(`${toJson({ folder: folderDir, manifest: manifest !== undefined, ...rest })}\n`);
  } else io.stdout(`${formatBatchFolder(folder)}\n`);
  const unreadable = folder.runs.filter((r) => r.outcome === 'unreadable');
  for (const run of unreadable) io.stderr(`agent-sm: error: ${escapeControl(run.reason ?? run.id)}\n`);
  if (unreadable.length > 0) return 2;
  return options.exitCode === true && folder.runs.some((r) => folderRunFailed(r.outcome)) ? 1 : 0;
}
