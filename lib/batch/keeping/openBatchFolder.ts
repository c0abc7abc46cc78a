import * as fs from 'node:fs';
import { HistoryFileError } from '../../history/HistoryFileError';
import { messageOf } from '../../internal/messageOf';
import { lockFolder, type FolderLock } from './lockFolder';

/**
 * Creates a batch's history folder when missing and locks it, before anything is written: two
 * batches never write into one folder.
 */
export function openBatchFolder(dir: string): FolderLock {
  try {
    fs.mkdirSync(dir, { recursive: true });
  } catch (error) {
    throw new HistoryFileError('open_failed', dir, `cannot create the history directory: ${messageOf(error)}`, {
      cause: error,
    });
  }
  return lockFolder(dir, `runBatch in ${process.argv[1] ?? 'node'}`);
}
