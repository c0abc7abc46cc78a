import * as fs from 'node:fs';
import { hostname } from 'node:os';
import * as path from 'node:path';

/** The lock file a batch keeps in its history folder while it writes there. */
export const LOCK_FILE = '.agent-sm-batch.lock';

/** Who holds a history folder: the lock file's content. */
export interface FolderOwner {
  pid: number;
  host: string;
  /** Names the batch: `runBatch`, or a distributed batch's `<redis>/<queue>/<batch id>`. */
  batch: string;
  since: string;
}

/** A held lock: `release()` removes the file (once; only if it is still ours). */
export interface FolderLock {
  readonly file: string;
  release(): void;
}

/** A history folder another batch is writing into. */
export class FolderLockedError extends Error {
  override readonly name = 'FolderLockedError';
  constructor(
    readonly folder: string,
    readonly owner: FolderOwner,
  ) {
    super(
      `history folder ${folder} is in use by batch ${owner.batch} (pid ${owner.pid} on ${owner.host}, since ${owner.since}): ` +
        `two batches never write into one folder, overwriteHistory or not. Wait for it to end` +
        (owner.host === hostname() ? '' : ` (if that batch is gone, remove ${path.join(folder, LOCK_FILE)})`) +
        `, then, to finish what it left, run this batch again with \`resume: true\`; or give this batch another \`historyDir\``,
    );
  }
}

/**
 * Locks `folder` for one batch: creates its lock file (pid, host, batch) exclusively. A lock
 * left by a process of this host that is gone is taken over. With `shared`, a lock held for
 * the same `batch` is joined instead of refused (the worker processes of one distributed batch
 * share its folder); such a lock is released by nobody but expires with its holder's process.
 */
export function lockFolder(folder: string, batch: string, options: { shared?: boolean } = {}): FolderLock {
  const file = path.join(folder, LOCK_FILE);
  const mine: FolderOwner = { pid: process.pid, host: hostname(), batch, since: new Date().toISOString() };
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      createWhole(file, JSON.stringify(mine));
      let released = false;
      return {
        file,
        release: () => {
          if (released) return;
          released = true;
          try {
            const now = JSON.parse(fs.readFileSync(file, 'utf8')) as FolderOwner;
            if (now.pid === mine.pid && now.host === mine.host && now.since === mine.since) fs.rmSync(file);
          } catch {
            // Gone already: nothing to release.
          }
        },
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    let owner: FolderOwner;
    try {
      owner = JSON.parse(fs.readFileSync(file, 'utf8')) as FolderOwner;
    } catch {
      // Being written or removed right now (or unreadable): look again.
      continue;
    }
    if (options.shared === true && owner.batch === batch) return { file, release: () => undefined };
    if (owner.host === mine.host && !alive(owner.pid)) {
      // Left by a process that is gone: taken over.
      fs.rmSync(file, { force: true });
      continue;
    }
    throw new FolderLockedError(folder, owner);
  }
  throw new Error(`history folder ${folder}: its lock file ${file} keeps changing; is another batch starting there?`);
}

/**
 * Whether a batch is writing into `folder` now: its lock file is there and not left by a
 * process of this host that is gone (a lock of another host is taken as held: its process
 * cannot be checked from here). Readers (`watch`) learn from it that a batch has ended.
 */
export function folderHeld(folder: string): boolean {
  let owner: FolderOwner;
  try {
    owner = JSON.parse(fs.readFileSync(path.join(folder, LOCK_FILE), 'utf8')) as FolderOwner;
  } catch (error) {
    // Being written (linked whole, so only in a race with its removal) or unreadable: held, to be safe.
    return (error as NodeJS.ErrnoException).code !== 'ENOENT';
  }
  return owner.host !== hostname() || alive(owner.pid);
}

/**
 * Creates `file` holding `text`, or throws EEXIST: written to a file of its own first, then
 * linked into place, so that a process reading the lock never sees it empty or half written
 * (many runs of a batch's workers check it at once).
 */
function createWhole(file: string, text: string): void {
  const temp = `${file}.${process.pid}.${Math.random().toString(36).slice(2)}`;
  fs.writeFileSync(temp, text, { flag: 'wx' });
  try {
    fs.linkSync(temp, file);
  } finally {
    fs.rmSync(temp, { force: true });
  }
}

function alive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
