import * as fs from 'node:fs';
import * as path from 'node:path';
import { messageOf } from '../internal/messageOf';
import { folderAnswerBox, keepsAnswers, storeAnswerBox, type AnswerBox } from './approvals/AnswerBox';
import { assertNoClash, sameName } from './keeping/assertNoClash';
import { writeBatchManifest, type BatchManifest } from './keeping/batchManifest';
import { folderEarlierRuns, storeEarlierRuns, type EarlierRuns } from './resume/EarlierRuns';
import { EndedRunCache } from './resume/EndedRunCache';
import { openBatchFolder } from './keeping/openBatchFolder';
import { openStoreBatch } from './keeping/openStoreBatch';
import { folderRaiseBox, keepsRaises, storeRaiseBox, type RaiseBox } from './raises/RaiseBox';
import { setAsideRaises } from './keeping/raiseRequests';
import { setAsideOverwritten } from './keeping/setAsideOverwritten';
import { attemptsByRunFile } from './keeping/attemptNames';
import type { RunStore } from './keeping/RunStore';
import type { RunTaskOptions } from './tasks/RunTaskOptions';
import { uniqueFileNames } from './keeping/safeFileName';
import type { JsonlHistorySinkOptions } from '../history/JsonlHistorySinkOptions';

/** Where a batch keeps its runs' records, as `runBatch` sees it: the one place that knows a folder from a store. */
export interface BatchKeeping {
  /** The batch's id in its store (the report's `batchId`); undefined for a folder or nowhere. */
  readonly batchId: string | undefined;
  /** What an interrupted attempt of this batch left of tasks `ids` (`resume`). */
  earlierRuns(ids: readonly string[], salvage: boolean): Promise<EarlierRuns>;
  /** A new batch, not resumed: what an earlier batch here left is set aside, and the manifest written before any run. */
  startNew(startedAt: number): void;
  /** Where `agent-sm raise` asks for raises, and how a raise read there is listed. */
  readonly raiseBox: RaiseBox | undefined;
  readonly raiseBy: 'folder' | 'store';
  /** Where `agent-sm approve|deny` leaves answers. */
  readonly answerBox: AnswerBox | undefined;
  /** Where run `index` writes, with the sink options a history file gets. */
  sinkFor(
    index: number,
    options: JsonlHistorySinkOptions,
  ): Pick<RunTaskOptions, 'historyFile' | 'historyOptions' | 'openSink'>;
  /** What each run's file says once it ended, for the next resume to read at once (a folder's): read once the batch has started. */
  readEndedRuns(): EndedRunCache | undefined;
  /** Frees the lock, whatever the batch did; a failure to free it is logged, never thrown over the report. */
  close(log: ((message: string) => void) | undefined): Promise<void>;
}

/** The batch's place, its manifest's fields, and how a new batch meets an earlier one. */
export interface KeepingOptions {
  historyDir: string | undefined;
  store: RunStore | undefined;
  batchId: string | undefined;
  overwrite: boolean;
  resume: boolean;
  ids: readonly string[];
  manifest: Omit<BatchManifest, 'type' | 'version' | 'tasks'>;
}

/**
 * Opens the batch's place before any run: a history folder (locked; a clash refused unless
 * overwriting or resuming), a store's batch (locked, checked, its manifest kept), or nowhere.
 */
export async function openBatchKeeping(options: KeepingOptions): Promise<BatchKeeping> {
  const { historyDir, store } = options;
  if (historyDir !== undefined) return folderKeeping(historyDir, options);
  if (store !== undefined) return storeKeeping(store, options);
  return {
    batchId: undefined,
    earlierRuns: () => Promise.reject(new Error('a batch kept nowhere has no earlier runs')),
    startNew: () => undefined,
    raiseBox: undefined,
    raiseBy: 'store',
    answerBox: undefined,
    sinkFor: () => ({}),
    readEndedRuns: () => undefined,
    close: () => Promise.resolve(),
  };
}

function folderKeeping(dir: string, options: KeepingOptions): BatchKeeping {
  const { ids, overwrite, resume, manifest } = options;
  const fileNames = uniqueFileNames(ids);
  const lock = openBatchFolder(dir);
  try {
    if (!overwrite && !resume)
      assertNoClash(
        dir,
        fileNames.map((name) => `${name}.jsonl`),
      );
  } catch (error) {
    lock.release();
    throw error;
  }
  return {
    batchId: undefined,
    earlierRuns: (taskIds, salvage) => folderEarlierRuns(dir, taskIds, salvage),
    startNew: (startedAt) => {
      EndedRunCache.clear(dir);
      // What an earlier batch here left of these runs (overwriteHistory) is not this one's to resume.
      setAsideEarlierRuns(dir, fileNames);
      // The raises asked of the batch before this one are not this one's.
      setAsideRaises(dir);
      // Before any run: a folder read after a crash then knows the tasks that never wrote a file.
      writeBatchManifest(dir, {
        ...manifest,
        startedAt,
        tasks: ids.map((id, i) => ({ id, file: `${fileNames[i]!}.jsonl` })),
      });
    },
    raiseBox: folderRaiseBox(dir),
    raiseBy: 'folder',
    answerBox: folderAnswerBox(dir),
    sinkFor: (index, sinkOptions) => ({
      historyFile: path.join(dir, `${fileNames[index]!}.jsonl`),
      historyOptions: { ...sinkOptions, overwrite },
    }),
    readEndedRuns: () => EndedRunCache.read(dir),
    close: () => {
      lock.release();
      return Promise.resolve();
    },
  };
}

/** Sets aside the files, and the attempts kept beside them, of runs `fileNames` in `dir`: one listing of the folder. */
function setAsideEarlierRuns(dir: string, fileNames: readonly string[]): void {
  const listed = fs.readdirSync(dir);
  const present = new Set(listed.map(sameName));
  const byFile = attemptsByRunFile(listed, sameName);
  for (const name of fileNames) {
    const file = `${name}.jsonl`;
    if (present.has(sameName(file)) || byFile.has(sameName(file))) setAsideOverwritten(path.join(dir, file), byFile);
  }
}

async function storeKeeping(store: RunStore, options: KeepingOptions): Promise<BatchKeeping> {
  const { ids, overwrite, resume, manifest } = options;
  const opened = await openStoreBatch(store, options.batchId, overwrite, resume, {
    ...manifest,
    tasks: ids.map((id) => ({ id, file: id })),
  });
  const { batch } = opened;
  return {
    batchId: batch.batchId,
    earlierRuns: (taskIds, salvage) => storeEarlierRuns(batch, store.name, taskIds, salvage),
    // The store set aside what its earlier batch of this id left when it opened this one.
    startNew: () => undefined,
    raiseBox: keepsRaises(store) ? storeRaiseBox(store, batch.batchId) : undefined,
    raiseBy: 'store',
    answerBox: keepsAnswers(store) ? storeAnswerBox(store, batch.batchId) : undefined,
    sinkFor: (index, sinkOptions) => ({ openSink: opened.sinkFor(ids[index]!, sinkOptions) }),
    readEndedRuns: () => undefined,
    close: (log) =>
      batch
        .close()
        .catch((error: unknown) => log?.(`cannot free the batch lock in ${store.name}: ${messageOf(error)}`)),
  };
}
