import * as fs from 'node:fs';
import * as path from 'node:path';
import ansiEscapes from 'ansi-escapes';
import { MANIFEST_FILE, readBatchManifest, type BatchManifest } from '../batch/batchManifest';
import { folderHeld } from '../batch/lockFolder';
import { readRaiseRequests, type RaiseRequest } from '../batch/raiseRequests';
import { HistoryFileError } from '../history/HistoryFileError';
import { readHistoryInto } from '../history/loadHistory';
import { escapeControl } from '../internal/escapeControl';
import { formatTime } from '../internal/formatTime';
import { messageOf } from '../internal/messageOf';
import { renderWatch } from './renderWatch';
import { WatchState, type WatchEvent } from './WatchState';

/** Where `watch` writes, and how. */
export interface WatchIO {
  stdout(text: string): void;
  stderr(text: string): void;
  /** Ends the watch (Ctrl-C). */
  signal?: AbortSignal | undefined;
  /** Redraw in place (a terminal) rather than print lines. */
  isTTY?: boolean | undefined;
  columns?: number | undefined;
  rows?: number | undefined;
}

/** Options of `watchBatch`. */
export interface WatchOptions {
  /** Keep watching after the batch ended. */
  stay?: boolean;
  salvage?: boolean;
  maxLineBytes?: number;
  /** How often files are looked at when no change event came. Default 250 ms. */
  pollMs?: number;
  /** How often a terminal board is redrawn with nothing new (its times move on). Default 1000 ms. */
  redrawMs?: number;
}

/** A stream of byte pieces that a reader awaits and the watcher pushes to. */
class Pieces implements AsyncIterable<Uint8Array> {
  #queue: Buffer[] = [];
  #ended = false;
  #wake: (() => void) | undefined;

  push(piece: Buffer): void {
    this.#queue.push(piece);
    this.#wake?.();
  }

  end(): void {
    this.#ended = true;
    this.#wake?.();
  }

  /** Ends it and lets go of what was not taken: its reader has stopped. */
  drop(): void {
    this.#queue = [];
    this.end();
  }

  async *[Symbol.asyncIterator](): AsyncIterator<Uint8Array> {
    for (;;) {
      const piece = this.#queue.shift();
      if (piece !== undefined) {
        yield piece;
        continue;
      }
      if (this.#ended) return;
      await new Promise<void>((resolve) => (this.#wake = resolve));
      this.#wake = undefined;
    }
  }
}

interface Followed {
  readonly id: string;
  offset: number;
  /** Its reader stopped at a line it could not read: the file is no longer read. */
  failed: boolean;
  pieces: Pieces;
  reading: Promise<void>;
}

/**
 * `agent-sm watch`: follows a batch's history folder (its manifest, every run file as it
 * appears and grows, lines cut mid-write held until whole) or one run's file, and shows the
 * board of `renderWatch` — redrawn in place on a terminal, or as plain lines of what happens
 * (runs started, finished, failed with why, progress) otherwise. Ends when every task of the
 * manifest is reported — its turn ended, or the batch is over (its folder's lock gone), so it
 * was skipped or cut off — or, for a file, the run has ended its turn, unless `stay`; or when
 * `signal` aborts. Resolves to the exit code: 2 when a file could not be read (each named on
 * stderr, as every command reports an unreadable file; `salvage` reads past bad lines), else 0.
 *
 * Changes are noticed by `fs.watch` on the folder, with a poll as the fallback for file
 * systems that send no events; either only wakes a scan that reads each file from its own
 * offset, so nothing is lost or read twice. Files are opened only to read what is new: a
 * batch of 10,000 runs holds no file open.
 */
export async function watchBatch(target: string, options: WatchOptions, io: WatchIO): Promise<number> {
  let stat: fs.Stats;
  try {
    stat = fs.statSync(target);
  } catch (error) {
    throw new HistoryFileError('not_found', target, `no such file or folder to watch (${messageOf(error)})`);
  }
  const dir = stat.isDirectory() ? target : path.dirname(target);
  const single = stat.isDirectory() ? undefined : path.basename(target);
  const { stay = false, pollMs = 250, redrawMs = 1000 } = options;
  const state = new WatchState();
  const followed = new Map<string, Followed>();
  let manifest: BatchManifest | undefined;
  const idOf = new Map<string, string>();
  const costHistory: number[] = [];
  const tty = io.isTTY === true;
  let drawn = 0;
  let lastProgress = '';
  /** Why each file that could not be read was not, in the order met. */
  const unreadable: string[] = [];
  /** The raises of the batch's paused cap its raise file asked, and how many of its lines are read. */
  const raises: RaiseRequest[] = [];
  let raiseLines = 0;

  const print = (event: WatchEvent): void => {
    if (!tty) io.stdout(`${formatTime(event.at, 'HH:mm:ss')}  ${escapeControl(event.text)}\n`);
  };
  const follow = (name: string): Followed => {
    const id = idOf.get(name) ?? name.replace(/\.jsonl$/, '');
    const pieces = new Pieces();
    const entry: Followed = { id, offset: 0, failed: false, pieces, reading: Promise.resolve() };
    state.run(id);
    entry.reading = readHistoryInto(
      path.join(dir, name),
      {
        input: pieces,
        salvage: options.salvage === true,
        ...(options.maxLineBytes === undefined ? {} : { maxLineBytes: options.maxLineBytes }),
        onWarning: (w) => io.stderr(`agent-sm: warning: ${escapeControl(w.message)}\n`),
      },
      (line) => state.add(id, line).forEach(print),
    ).then(
      () => undefined,
      (error: unknown) => {
        entry.failed = true;
        entry.pieces.drop();
        unreadable.push(messageOf(error));
        print(state.unreadable(id, messageOf(error), Date.now()));
      },
    );
    followed.set(name, entry);
    return entry;
  };
  // A large batch is not stat'ed whole on every tick: change events name their file, and the
  // full scan (for file systems that send none) runs less often the more files there are.
  const touched = new Set<string>();
  let lastFull = -Infinity;
  const scan = async (): Promise<void> => {
    if (single === undefined && manifest === undefined) {
      try {
        manifest = await readBatchManifest(dir);
      } catch {
        manifest = undefined; // being written: read again on the next scan
      }
      if (manifest !== undefined) {
        state.tasks = manifest.tasks.map((t) => t.id);
        for (const t of manifest.tasks) idOf.set(t.file, t.id);
      }
    }
    // Looked at before the files: a batch that let go of its folder wrote them all before, so
    // once they are read, what they say is final.
    const over = single === undefined && manifest !== undefined && !folderHeld(dir);
    const fullEvery = pollMs * Math.max(1, Math.ceil(followed.size / 500));
    const full = single === undefined && (manifest === undefined || over || Date.now() - lastFull >= fullEvery);
    if (full) lastFull = Date.now();
    const names =
      single !== undefined
        ? [single]
        : full
          ? fs.readdirSync(dir).filter((n) => n.endsWith('.jsonl'))
          : [...touched].filter((n) => n.endsWith('.jsonl'));
    touched.clear();
    for (const name of names) {
      if (name === MANIFEST_FILE) continue;
      let size: number;
      try {
        size = fs.statSync(path.join(dir, name)).size;
      } catch {
        continue; // not there (yet, or any more)
      }
      const entry = followed.get(name) ?? follow(name);
      if (entry.failed) continue;
      if (size < entry.offset) {
        io.stderr(
          `agent-sm: warning: ${escapeControl(path.join(dir, name))}: the file shrank; its run is read again\n`,
        );
        entry.pieces.end();
        followed.delete(name);
        state.runs.delete(entry.id);
        follow(name);
        continue;
      }
      if (size === entry.offset) continue;
      const fd = fs.openSync(path.join(dir, name), 'r');
      try {
        while (entry.offset < size) {
          const piece = Buffer.allocUnsafe(Math.min(1024 * 1024, size - entry.offset));
          const n = fs.readSync(fd, piece, 0, piece.length, entry.offset);
          if (n === 0) break;
          entry.offset += n;
          entry.pieces.push(piece.subarray(0, n));
        }
      } finally {
        fs.closeSync(fd);
      }
    }
    if (single === undefined) readRaises();
    // Let the readers take what was pushed before drawing.
    await new Promise<void>((resolve) => setImmediate(resolve));
    state.over = over;
  };
  /** New lines of the raise file (`agent-sm raise <folder>`): a line each, and the cap the board draws. */
  const readRaises = (): void => {
    let read: ReturnType<typeof readRaiseRequests>;
    try {
      read = readRaiseRequests(dir, raiseLines);
    } catch (error) {
      io.stderr(`agent-sm: warning: cannot read the raise file of ${escapeControl(dir)}: ${messageOf(error)}\n`);
      return;
    }
    raiseLines = read.lines;
    for (const raise of read.requests) {
      raises.push({ maxCostUsd: raise.maxCostUsd, at: raise.at });
      if (!tty) io.stdout(`${formatTime(raise.at, 'HH:mm:ss')}  cap raised to $${raise.maxCostUsd.toFixed(4)}\n`);
    }
  };
  const draw = (): void => {
    costHistory.push(state.spend.costUsd);
    if (costHistory.length > 64) costHistory.shift();
    const now = Date.now();
    if (tty) {
      const lines = renderWatch(state, {
        source: target,
        caps: {
          ...(manifest?.limits.total ?? {}),
          ...(raises.length === 0 ? {} : { maxCostUsd: raises.at(-1)!.maxCostUsd }),
        } as Record<string, unknown>,
        raises,
        startedAt: manifest?.startedAt,
        costHistory,
        now,
        columns: io.columns ?? 80,
        rows: io.rows ?? 24,
      });
      io.stdout(`${drawn === 0 ? ansiEscapes.cursorHide : ansiEscapes.eraseLines(drawn + 1)}${lines.join('\n')}\n`);
      drawn = lines.length;
      return;
    }
    const ids = state.tasks ?? [...state.runs.keys()];
    const finished = ids.filter((id) => state.runs.get(id)?.outcome !== undefined).length;
    let progress = `${finished}/${ids.length} finished`;
    if (state.tasks !== undefined && state.over) {
      // The batch is over: what did not finish was skipped (no file) or cut off (a file that did not end).
      const skipped = ids.filter((id) => !state.runs.has(id)).length;
      const cutOff = ids.filter((id) => {
        const run = state.runs.get(id);
        return run !== undefined && run.outcome === undefined && run.unreadable === undefined;
      }).length;
      progress += `${skipped > 0 ? `, ${skipped} skipped` : ''}${cutOff > 0 ? `, ${cutOff} cut off` : ''}`;
    }
    if (progress !== lastProgress) {
      lastProgress = progress;
      io.stdout(`${formatTime(now, 'HH:mm:ss')}  progress: ${progress}, $${state.spend.costUsd.toFixed(4)} spent\n`);
    }
  };

  const signal = io.signal ?? new AbortController().signal;
  let wake: (() => void) | undefined;
  let changed = true;
  const poke = (): void => {
    changed = true;
    wake?.();
  };
  let watcher: fs.FSWatcher | undefined;
  try {
    watcher = fs.watch(dir, { persistent: false }, (_event, name) => {
      if (typeof name === 'string') touched.add(name);
      else lastFull = -Infinity; // no name given: look at everything
      poke();
    });
    watcher.on('error', () => undefined);
  } catch {
    watcher = undefined; // the poll alone
  }
  const poll = setInterval(poke, pollMs);
  const redraw = setInterval(() => {
    if (tty) draw();
  }, redrawMs);
  signal.addEventListener('abort', poke, { once: true });
  try {
    while (!signal.aborted) {
      if (changed) {
        changed = false;
        await scan();
        draw();
        if (!stay && state.ended) break;
        continue;
      }
      await new Promise<void>((resolve) => (wake = resolve));
      wake = undefined;
    }
  } finally {
    clearInterval(poll);
    clearInterval(redraw);
    watcher?.close();
    signal.removeEventListener('abort', poke);
    for (const entry of followed.values()) entry.pieces.end();
    await Promise.all([...followed.values()].map((e) => e.reading));
    if (tty) io.stdout(ansiEscapes.cursorShow);
  }
  for (const why of unreadable) io.stderr(`agent-sm: error: ${escapeControl(why)}\n`);
  return unreadable.length > 0 ? 2 : 0;
}
