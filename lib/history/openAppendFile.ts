import * as fs from 'node:fs';
import { messageOf } from '../internal/messageOf';
import { HistoryFileError } from './HistoryFileError';

// O_NOFOLLOW: a symbolic link planted at the path must not redirect the history into the
// file it points to (O_EXCL alone covers new files; this covers `overwrite: true`).
const NO_FOLLOW = fs.constants.O_NOFOLLOW ?? 0;
const APPEND_NEW =
  fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL | fs.constants.O_APPEND | NO_FOLLOW;
const APPEND_TRUNCATE =
  fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_TRUNC | fs.constants.O_APPEND | NO_FOLLOW;

/**
 * Opens a history file for append, new (or emptied with `overwrite`), never through a symbolic
 * link; a failure is a `HistoryFileError` (`file_exists`, `open_failed`) saying what to do.
 */
export function openAppendFile(path: string, overwrite: boolean): number {
  try {
    return fs.openSync(path, overwrite ? APPEND_TRUNCATE : APPEND_NEW, 0o644);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') {
      throw new HistoryFileError(
        'file_exists',
        path,
        'already exists; pass `overwrite: true` to replace it, or choose another path',
        { cause: error },
      );
    }
    if ((error as NodeJS.ErrnoException).code === 'ELOOP') {
      throw new HistoryFileError(
        'open_failed',
        path,
        'is a symbolic link; a history file is never written through one (remove it, or choose another path)',
        { cause: error },
      );
    }
    throw new HistoryFileError('open_failed', path, `cannot open for writing: ${messageOf(error)}`, { cause: error });
  }
}
