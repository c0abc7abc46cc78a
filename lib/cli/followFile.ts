import * as fs from 'node:fs';
import * as path from 'node:path';

/** Options of `followFile`. */
export interface FollowOptions {
  /** Ends the following: the generator returns once it is aborted. */
  signal: AbortSignal;
  /** How often the file is looked at when no change event came (network mounts send none). Default 250 ms. */
  pollMs?: number;
  /** Told when the file shrank (rewritten from the start) or vanished, and is read again from its start. */
  onRestart?: (why: string) => void;
  /**
   * Asked each time the file has been read to its end (what was yielded taken in): true ends
   * the following, as when the run has ended. Default: never.
   */
  done?: () => boolean;
}

/**
 * The bytes of `file` as they are appended, like `tail -f` from the start: what is there
 * now, then each piece written later, until `signal` aborts or, once all of it is read,
 * `done` says so. A file that does not exist yet
 * is waited for; one that shrinks is read again from its start (`onRestart`). A line cut
 * mid-write is simply the end of one piece: the history reader holds it until the rest comes.
 *
 * Changes are noticed through `fs.watch` on the file's folder (inotify, FSEvents), with a
 * stat poll as the fallback for file systems that send no events; both only wake the loop,
 * which always reads from its own offset, so a missed or doubled event loses nothing.
 */
export async function* followFile(file: string, options: FollowOptions): AsyncGenerator<Buffer, void, undefined> {
  const { signal, pollMs = 250, onRestart, done = () => false } = options;
  let wake: (() => void) | undefined;
  // Set by any event: a change that came while the loop was reading is not waited for again.
  let changed: boolean;
  const poke = (): void => {
    changed = true;
    const w = wake;
    wake = undefined;
    w?.();
  };
  let watcher: fs.FSWatcher | undefined;
  try {
    watcher = fs.watch(path.dirname(path.resolve(file)), { persistent: false }, poke);
    watcher.on('error', () => undefined);
  } catch {
    watcher = undefined; // no events here: the poll alone notices changes
  }
  // Kept referenced: in the executable, this timer is what keeps the process alive while
  // nothing is being written (the watcher is not persistent, so tests that end early never hang).
  const timer = setInterval(poke, pollMs);
  signal.addEventListener('abort', poke, { once: true });
  let offset = 0;
  let fd: number | undefined;
  const buffer = Buffer.allocUnsafe(1024 * 1024);
  try {
    while (!signal.aborted) {
      changed = false;
      if (fd === undefined) {
        try {
          fd = fs.openSync(file, 'r');
          offset = 0;
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
        }
      }
      if (fd !== undefined) {
        const size = fs.fstatSync(fd).size;
        let renamed = false;
        try {
          renamed = fs.statSync(file).ino !== fs.fstatSync(fd).ino;
        } catch {
          renamed = true;
        }
        if (size < offset || (renamed && size === offset)) {
          onRestart?.(size < offset ? 'the file shrank' : 'the file was replaced');
          fs.closeSync(fd);
          fd = undefined;
          continue;
        }
        if (size > offset) {
          const n = fs.readSync(fd, buffer, 0, Math.min(buffer.length, size - offset), offset);
          offset += n;
          // A copy: the reader keeps pieces of an unfinished line.
          yield Buffer.from(buffer.subarray(0, n));
          continue;
        }
      }
      if (changed) continue;
      if (done()) return;
      await new Promise<void>((resolve) => {
        wake = resolve;
        if (signal.aborted) poke();
      });
    }
  } finally {
    clearInterval(timer);
    watcher?.close();
    signal.removeEventListener('abort', poke);
    if (fd !== undefined) fs.closeSync(fd);
  }
}
