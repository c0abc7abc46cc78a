import * as fs from 'node:fs';
import * as path from 'node:path';
import type { BudgetLimits } from '../../agent/BudgetLimits';
import { HistoryFileError } from '../../history/HistoryFileError';
import { VERSION } from '../../internal/version';
import { messageOf } from '../../internal/messageOf';

/** The file a batch writes in its history folder before any run starts. */
export const MANIFEST_FILE = 'batch.json';

/**
 * What a batch's history folder says of the batch as a whole, written before any run starts:
 * every task and the file its history goes to, so that a folder read after a crash shows the
 * tasks that never wrote a file, not only the files it finds.
 */
export interface BatchManifest {
  type: 'batch';
  /** The agent-state-machine version that wrote it. */
  version: string;
  /** When the batch started, epoch milliseconds. */
  startedAt: number;
  concurrency: number;
  limits: { perRun?: BudgetLimits; total?: BudgetLimits };
  /** Every task in task order, with the name of its history file in the folder. */
  tasks: Array<{ id: string; file: string }>;
}

/** Writes the manifest whole or not at all (a temporary file renamed into place): a crash never leaves half of one. */
export function writeBatchManifest(dir: string, manifest: Omit<BatchManifest, 'type' | 'version'>): void {
  const file = path.join(dir, MANIFEST_FILE);
  const temporary = `${file}.${process.pid}.tmp`;
  try {
    fs.writeFileSync(temporary, `${JSON.stringify({ type: 'batch', version: VERSION, ...manifest })}\n`, { flag: 'w' });
    fs.renameSync(temporary, file);
  } catch (error) {
    fs.rmSync(temporary, { force: true });
    throw new HistoryFileError('write_failed', file, `cannot write the batch manifest: ${messageOf(error)}`, {
      cause: error,
    });
  }
}

/** The manifest of the batch whose folder `dir` is, or undefined when it has none (a folder from before manifests). */
export async function readBatchManifest(dir: string): Promise<BatchManifest | undefined> {
  const file = path.join(dir, MANIFEST_FILE);
  let text: string;
  try {
    // Read at once, as it is written: the thread pool's round trips to open, stat, read and
    // close a file of a line each wait on a woken thread, and took a resume 1.4 ms.
    text = fs.readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new HistoryFileError('read_failed', file, `cannot read the batch manifest: ${messageOf(error)}`, {
      cause: error,
    });
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new HistoryFileError('read_failed', file, `the batch manifest is not JSON (${messageOf(error)})`, {
      cause: error,
    });
  }
  const m = value as Partial<BatchManifest> | null;
  const tasksOk =
    Array.isArray(m?.tasks) &&
    m.tasks.every(
      (t) =>
        typeof t === 'object' &&
        t !== null &&
        typeof t.id === 'string' &&
        typeof t.file === 'string' &&
        !t.file.includes('/') &&
        !t.file.includes('\\'),
    );
  if (m === null || typeof m !== 'object' || m.type !== 'batch' || !tasksOk) {
    throw new HistoryFileError(
      'read_failed',
      file,
      'is not a batch manifest: expected { type: "batch", tasks: [{ id, file }] } with plain file names',
    );
  }
  return m as BatchManifest;
}
