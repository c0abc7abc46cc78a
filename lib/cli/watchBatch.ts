import * as fs from 'node:fs';
import * as path from 'node:path';
import { MANIFEST_FILE, readBatchManifest } from '../batch/keeping/batchManifest';
import type { RunLines } from '../batch/reading/BatchSource';
import { attemptsBeside, byAttempt, runFileOf } from '../batch/keeping/attemptNames';
import { folderHeld } from '../batch/keeping/lockFolder';
import { readRaiseRequests } from '../batch/keeping/raiseRequests';
import { readCapPause } from '../batch/keeping/capPause';
import { HistoryFileError } from '../history/HistoryFileError';
import { messageOf } from '../internal/messageOf';
import { byTaskOrder } from './byTaskOrder';
import { WatchBoard, type FollowedRun, type WatchIO, type WatchOptions, type WatchSource } from './WatchBoard';

export type { WatchIO, WatchOptions } from './WatchBoard';

/**
 * `agent-sm watch <path>`: follows a batch's history folder (its manifest, every run file as it
 * appears and grows, lines cut mid-write held until whole) or one run's file, and shows the
 * board of `WatchBoard`. Ends when every task of the manifest is reported — its turn ended, or
 * the batch is over (its folder's lock gone), so it was skipped or cut off — or, for a file,
 * the run has ended its turn, unless `stay`; or when `signal` aborts. Resolves to the exit
 * code: 2 when a file could not be read (each named on stderr; `salvage` reads past bad
 * lines), else 0.
 */
export async function watchBatch(target: string, options: WatchOptions, io: WatchIO): Promise<number> {
  const pollMs = options.pollMs ?? 250;
  const source = new FolderWatchSource(target, pollMs);
  return new WatchBoard({ ...options, pollMs }, io).show(source);
}

/** A run file followed: the run it feeds, and how much of the file was pushed to it. */
interface FollowedFile {
  readonly run: FollowedRun;
  offset: number;
}

/**
 * A folder (or one file) as a board's source. Changes are noticed by `fs.watch` on the folder,
 * with the board's poll as the fallback for file systems that send no events; either only wakes
 * a scan that reads each file from its own offset, so nothing is lost or read twice. Files are
 * opened only to read what is new: a batch of 10,000 runs holds no file open.
 */
export class FolderWatchSource implements WatchSource {
  readonly label: string;
  readonly #dir: string;
  /** The file watched alone, when the target is a file. */
  readonly #single: string | undefined;
  readonly #pollMs: number;
  readonly #files = new Map<string, FollowedFile>();
  /** Runs followed from their newest attempt set aside (no file of theirs yet): the attempt's name by the run's file name. */
  readonly #fromAttempt = new Map<string, string>();
  /** A manifest's task id by its file name. */
  readonly #idOf = new Map<string, string>();
  // A large batch is not stat'ed whole on every tick: change events name their file, and the
  // full scan (for file systems that send none) runs less often the more files there are.
  readonly #touched = new Set<string>();
  #lastFull = -Infinity;
  #raiseLines = 0;

  constructor(target: string, pollMs: number) {
    let stat: fs.Stats;
    try {
      stat = fs.statSync(target);
    } catch (error) {
      throw new HistoryFileError('not_found', target, `no such file or folder to watch (${messageOf(error)})`);
    }
    this.label = target;
    this.#dir = stat.isDirectory() ? target : path.dirname(target);
    this.#single = stat.isDirectory() ? undefined : path.basename(target);
    this.#pollMs = pollMs;
  }

  listen(poke: () => void): () => void {
    let watcher: fs.FSWatcher | undefined;
    try {
      watcher = fs.watch(this.#dir, { persistent: false }, (_event, name) => {
        if (typeof name === 'string') this.#touched.add(name);
        else this.#lastFull = -Infinity; // no name given: look at everything
        poke();
      });
      watcher.on('error', () => undefined);
    } catch {
      watcher = undefined; // the poll alone
    }
    return () => watcher?.close();
  }

  async scan(board: WatchBoard): Promise<void> {
    const dir = this.#dir;
    if (this.#single === undefined && board.manifest === undefined) {
      try {
        board.manifest = await readBatchManifest(dir);
      } catch {
        board.manifest = undefined; // being written: read again on the next scan
      }
      if (board.manifest !== undefined) {
        board.state.tasks = board.manifest.tasks.map((t) => t.id);
        for (const t of board.manifest.tasks) this.#idOf.set(t.file, t.id);
      }
    }
    // Looked at before the files: a batch that let go of its folder wrote them all before, so
    // once they are read, what they say is final.
    const over = this.#single === undefined && board.manifest !== undefined && !folderHeld(dir);
    for (const name of this.#names(board, over)) {
      if (name !== MANIFEST_FILE) this.#readFile(board, name);
    }
    if (this.#single === undefined) this.#readRaises(board);
    await board.settle();
    board.state.over = over;
    // Believed only while a batch holds the folder, as inspect reads it (`folderBatchSource`).
    if (this.#single === undefined) board.pause(over || !folderHeld(dir) ? undefined : readCapPause(dir, board.raises));
  }

  /** The files to look at in this scan: all of them on a full one, else those events named. */
  #names(board: WatchBoard, over: boolean): string[] {
    if (this.#single !== undefined) return [this.#single];
    const fullEvery = this.#pollMs * Math.max(1, Math.ceil(this.#files.size / 500));
    const full = board.manifest === undefined || over || Date.now() - this.#lastFull >= fullEvery;
    if (full) this.#lastFull = Date.now();
    const listed = full ? fs.readdirSync(this.#dir) : [...this.#touched];
    const names = listed.filter((n) => n.endsWith('.jsonl'));
    // A run of a batch that is over with attempts set aside and no file (a resume stopped
    // before the next attempt wrote it): its newest attempt is what it last did, as inspect reads it.
    if (over && full) names.push(...newestAttemptsWithoutFile(listed, names));
    this.#touched.clear();
    // In the manifest's order, not the file system's: as a store's batch is read.
    return byTaskOrder(names, (n) => this.#runId(n), board.state.tasks);
  }

  /** Pushes what file `name` has beyond what was read of it to its run. */
  #readFile(board: WatchBoard, name: string): void {
    const file = path.join(this.#dir, name);
    let size: number;
    try {
      size = fs.statSync(file).size;
    } catch {
      return; // not there (yet, or any more)
    }
    let entry = this.#files.get(name) ?? this.#follow(board, name);
    if (entry.run.failed) return;
    if (size < entry.offset) {
      board.warn(`${file}: the file shrank; its run is read again`);
      board.forget(entry.run);
      entry = this.#follow(board, name);
    }
    if (size === entry.offset) return;
    const fd = fs.openSync(file, 'r');
    try {
      while (entry.offset < size) {
        const piece = Buffer.allocUnsafe(Math.min(1024 * 1024, size - entry.offset));
        const n = fs.readSync(fd, piece, 0, piece.length, entry.offset);
        if (n === 0) break;
        entry.offset += n;
        entry.run.pieces.push(piece.subarray(0, n));
      }
    } finally {
      fs.closeSync(fd);
    }
  }

  #follow(board: WatchBoard, name: string): FollowedFile {
    const id = this.#runId(name);
    // A run file is its own.
    const runFile = runFileOf(name) ?? name;
    // A run followed from its newest attempt set aside (the batch was over) whose next attempt
    // now writes its file (a resume, under --stay): that attempt is one of the earlier ones now.
    const attempt = runFile === name ? this.#fromAttempt.get(name) : undefined;
    if (attempt !== undefined) {
      board.forget(this.#files.get(attempt)!.run);
      this.#files.delete(attempt);
      this.#fromAttempt.delete(name);
    } else if (runFile !== name) this.#fromAttempt.set(runFile, name);
    const file = path.join(this.#dir, name);
    const entry = { run: board.follow(id, file), offset: 0 };
    this.#files.set(name, entry);
    // The attempts a resume set aside before this one are done: read once, for the run's spend over all of them.
    const earlier = interruptedBeside(this.#dir, runFile).filter(
      (kept) => runFile === name || byAttempt(path.basename(kept.name), name) < 0,
    );
    board.earlier(id, earlier);
    return entry;
  }

  /** The run of file `name` (or of an attempt of it set aside): the manifest's task of it, else the name without `.jsonl`. */
  #runId(name: string): string {
    const file = runFileOf(name) ?? name;
    return this.#idOf.get(file) ?? file.replace(/\.jsonl$/, '');
  }

  /** New lines of the raise file (`agent-sm raise <folder>`): a line each, and the cap the board draws. */
  #readRaises(board: WatchBoard): void {
    let read: ReturnType<typeof readRaiseRequests>;
    try {
      read = readRaiseRequests(this.#dir, this.#raiseLines);
    } catch (error) {
      board.warn(`cannot read the raise file of ${this.#dir}: ${messageOf(error)}`);
      return;
    }
    this.#raiseLines = read.lines;
    for (const raise of read.requests) board.raise(raise);
  }
}

/** The attempts of run file `name` a resume set aside (`<name>.interrupted`, `.interrupted.2`, …), the oldest first. */
function interruptedBeside(dir: string, name: string): RunLines[] {
  return attemptsBeside(path.join(dir, name)).map((n) => ({ name: n }));
}

/** Of the names `listed`, the newest attempt set aside of each run file that is not among `files`. */
function newestAttemptsWithoutFile(listed: readonly string[], files: readonly string[]): string[] {
  const present = new Set(files);
  const newest = new Map<string, string>();
  for (const name of listed) {
    const file = runFileOf(name);
    if (file === undefined || !file.endsWith('.jsonl') || present.has(file)) continue;
    const kept = newest.get(file);
    if (kept === undefined || byAttempt(kept, name) < 0) newest.set(file, name);
  }
  return [...newest.values()];
}
