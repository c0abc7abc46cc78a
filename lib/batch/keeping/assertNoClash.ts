import * as fs from 'node:fs';
import { HistoryFileError } from '../../history/HistoryFileError';
import { messageOf } from '../../internal/messageOf';
import { MANIFEST_FILE } from './batchManifest';

/**
 * Fails, naming them, when files this batch would write are already there (links included),
 * or when the folder holds another batch's manifest. The message says first how to continue
 * the batch that is there (`resume: true`): after a crash that is what a person wants, and
 * `overwriteHistory` would set the evidence aside. One listing of the folder, not a stat per
 * file: a batch of many runs into a new folder would otherwise pay a system call per run
 * before the first one starts.
 */
export function assertNoClash(dir: string, files: readonly string[]): void {
  let present: Set<string>;
  try {
    present = new Set(fs.readdirSync(dir).map(sameName));
  } catch (error) {
    throw new HistoryFileError('open_failed', dir, `cannot list the history directory: ${messageOf(error)}`, {
      cause: error,
    });
  }
  const batch = present.has(sameName(MANIFEST_FILE));
  const clashes = files.filter((file) => present.has(sameName(file)));
  if (clashes.length === 0) {
    // No run file of ours, but a batch's manifest: that batch was cut off before its runs wrote anything.
    if (batch)
      throw new HistoryFileError('file_exists', dir, `already holds a batch (${MANIFEST_FILE}); ${nextSteps(true)}`);
    return;
  }
  const shown =
    clashes.length > 5 ? `${clashes.slice(0, 5).join(', ')} and ${clashes.length - 5} more` : clashes.join(', ');
  throw new HistoryFileError(
    'file_exists',
    dir,
    `already holds ${clashes.length === 1 ? 'a history file' : `${clashes.length} history files`} this batch would write (${shown}); ${nextSteps(batch)}`,
  );
}

/** What to do next: continue the batch that is there (when it is one: it has a manifest), else replace, else elsewhere. */
function nextSteps(batch: boolean): string {
  const resume = batch
    ? 'to continue that batch (after a crash or a kill), run it again with `resume: true` and the same tasks; '
    : `they are not of a batch that can be resumed (no ${MANIFEST_FILE}); `;
  return `${resume}to replace ${batch ? 'it' : 'them'}, pass \`overwriteHistory: true\` (what it replaces is set aside as \`<file>.overwritten\`); or give this batch another \`historyDir\``;
}

/** A file name as the folder's filesystem compares it: macOS and Windows ignore case by default. */
export const sameName =
  process.platform === 'darwin' || process.platform === 'win32'
    ? (name: string): string => name.toLowerCase()
    : (name: string): string => name;
