import * as fs from 'node:fs';
import * as path from 'node:path';
import { readBatchManifest } from '../batch/keeping/batchManifest';
import { HistoryFileError } from '../history/HistoryFileError';
import { cut } from '../internal/text';

/**
 * The history file a command reads for `target` and an optional run id: `target` itself when
 * it is a file (a run id then is a mistake); for a batch's folder, the file of the task `runId`
 * (by its manifest, else `<runId>.jsonl`). Throws, naming what was expected, when the run is
 * not there or a folder comes without a run id.
 */
export async function runInFolder(target: string, runId: string | undefined, command: string): Promise<string> {
  let folder: boolean;
  try {
    folder = fs.statSync(target).isDirectory();
  } catch {
    folder = false; // not there: the reader says so, naming the file
  }
  if (!folder) {
    if (runId !== undefined)
      throw new HistoryFileError(
        'read_failed',
        target,
        `is not a folder: a run id (${JSON.stringify(runId)}) goes with a batch's history folder, not a file`,
      );
    return target;
  }
  if (runId === undefined)
    throw new HistoryFileError(
      'read_failed',
      target,
      `is a folder: name a run in it (agent-sm ${command} ${target} <runId>), or give its history file`,
    );
  const manifest = await readBatchManifest(target);
  const task = manifest?.tasks.find((t) => t.id === runId);
  if (task !== undefined) return path.join(target, task.file);
  const file = path.join(target, `${runId}.jsonl`);
  if (manifest === undefined && !runId.includes('/') && !runId.includes('\\') && fs.existsSync(file)) return file;
  const known =
    manifest?.tasks.map((t) => t.id) ??
    fs
      .readdirSync(target)
      .filter((n) => n.endsWith('.jsonl'))
      .map((n) => n.replace(/\.jsonl$/, ''));
  throw new HistoryFileError(
    'not_found',
    target,
    `holds no run ${JSON.stringify(runId)}: expected one of ${cut(known.map((id) => JSON.stringify(id)).join(', ') || '(none)', 300)}`,
  );
}
