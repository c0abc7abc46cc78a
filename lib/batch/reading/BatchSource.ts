import * as fs from 'node:fs';
import * as path from 'node:path';
import { readBatchManifest, type BatchManifest } from '../keeping/batchManifest';
import { folderHeld } from '../keeping/lockFolder';
import { attemptsByRunFile } from '../keeping/attemptNames';
import { readRaiseRequests, type RaiseRequest } from '../keeping/raiseRequests';
import { pauseInForce, readCapPause, type CapPause } from '../keeping/capPause';
import { keepsRaises } from '../raises/RaiseBox';
import type { RunStore } from '../keeping/RunStore';
import { HistoryFileError } from '../../history/HistoryFileError';

/** Lines of a run as readers take them: a history file (`name` is its path), or a store's (`input`). */
export interface RunLines {
  /** The history file, or the run as its store names it. */
  readonly name: string;
  /** A store's lines, read anew each call; undefined for a file. */
  readonly input?: () => AsyncIterable<Uint8Array>;
}

/** A run of a batch: a task of its manifest, or a run the batch kept that the manifest does not list. */
export interface BatchRunSource {
  readonly id: string;
  /** Its lines; undefined for a task that never started. */
  readonly lines: RunLines | undefined;
  /** The attempts a resume set aside (`<file>.interrupted`, …), the oldest first, `lines` not among them. */
  readonly interrupted: readonly RunLines[];
  /**
   * Its `lines` are its newest attempt set aside: a resume set it aside and stopped before the
   * next attempt wrote a file, so that attempt is what the run last did.
   */
  readonly lastAttemptAside?: true;
}

/**
 * A batch as its readers (`readBatchFolder`, the HTML report) take it, from a history folder or
 * a store: the manifest's tasks in order, then the runs it does not list.
 */
export interface BatchSource {
  /** The folder, or the batch as its store names it. */
  readonly where: string;
  readonly manifest: BatchManifest | undefined;
  /** A writer still holds the batch. */
  readonly running: boolean;
  readonly runs: readonly BatchRunSource[];
  /** The raises of its paused cap asked (a folder's raise file, or its store's). */
  readonly raises: readonly RaiseRequest[];
  /** It waits at its dollar cap for a raise (a running batch's pause note); undefined when not, or not known. */
  readonly paused?: CapPause | undefined;
  /** What `agent-sm raise` takes to name the batch: its folder, or `--store URL <batchId>`. */
  readonly raiseArgs: readonly string[];
}

/** A batch's history folder as a `BatchSource`; `undefined` when it holds neither manifest nor run files. */
export async function folderBatchSource(dir: string): Promise<BatchSource | undefined> {
  const manifest = await readBatchManifest(dir);
  // Looked at before the files: a batch that let go of the folder wrote them all before.
  const running = folderHeld(dir);
  const names = fs.readdirSync(dir);
  const files = names.filter((n) => n.endsWith('.jsonl')).sort();
  if (manifest === undefined && files.length === 0) return undefined;
  const tasks = manifest?.tasks.map((t) => ({ id: t.id, file: t.file })) ?? [];
  const listed = new Set(tasks.map((t) => t.file));
  for (const file of files) if (!listed.has(file)) tasks.push({ id: file.replace(/\.jsonl$/, ''), file });
  const present = new Set(files);
  const kept = attemptsByRunFile(names);
  const runs = tasks.map(({ id, file }): BatchRunSource => {
    const attempts = (kept.get(file) ?? []).map((n) => ({ name: path.join(dir, n) }));
    if (present.has(file)) return { id, lines: { name: path.join(dir, file) }, interrupted: attempts };
    const last = attempts.pop();
    return last === undefined
      ? { id, lines: undefined, interrupted: [] }
      : { id, lines: last, interrupted: attempts, lastAttemptAside: true };
  });
  const raises = readRaiseRequests(dir).requests.map(({ maxCostUsd, at }) => ({ maxCostUsd, at }));
  // A pause file is believed only while a batch holds the folder: one killed while paused is not paused.
  const paused = running ? readCapPause(dir, raises) : undefined;
  return { where: dir, manifest, running, runs, raises, paused, raiseArgs: [dir] };
}

/**
 * Batch `batchId` of `store` as a `BatchSource`, ordered as a folder's: the manifest's tasks,
 * then the runs it does not list. Throws `HistoryFileError` when the store holds no such batch.
 */
export async function storeBatchSource(store: RunStore, batchId: string): Promise<BatchSource> {
  const where = `${store.name} batch ${batchId}`;
  const batch = await store.readBatch(batchId);
  if (batch === undefined) throw new HistoryFileError('not_found', where, 'no such batch in the store');
  const lines = (stored: { name: string; read: () => AsyncIterable<Uint8Array> }): RunLines => ({
    name: stored.name,
    input: () => stored.read(),
  });
  const kept = new Map(batch.runs.map((r) => [r.runId, r]));
  const ids = batch.manifest.tasks.map((t) => t.id);
  const listed = new Set(ids);
  // Runs the manifest does not list come after its tasks, by id as a folder sorts its files.
  ids.push(...[...kept.keys()].filter((id) => !listed.has(id)).sort());
  const runs = ids.map((id) => {
    const run = kept.get(id);
    return { id, lines: run && lines(run.run), interrupted: run?.setAside.map(lines) ?? [] };
  });
  const raiseArgs = ['--store', store.name, batchId];
  if (!keepsRaises(store))
    return { where, manifest: batch.manifest, running: batch.running, runs, raises: [], raiseArgs };
  const raises = await store.readRaises(batchId);
  // Believed only while a writer holds the batch, as a folder's pause file.
  const paused = batch.running ? pauseInForce(await store.readPause(batchId), raises) : undefined;
  return { where, manifest: batch.manifest, running: batch.running, runs, raises, paused, raiseArgs };
}
