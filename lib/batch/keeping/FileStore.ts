import * as fs from 'node:fs';
import { hostname } from 'node:os';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { HistoryFileError } from '../../history/HistoryFileError';
import type { JsonlHistorySinkOptions } from '../../history/JsonlHistorySinkOptions';
import { readRunFile } from '../../history/readRunFile';
import { attemptSpends, type AttemptLines } from '../../history/attemptSpends';
import { NO_MONEY, spendOfRun } from '../../history/spendOfRun';
import { ignore } from '../../internal/ignore';
import { messageOf } from '../../internal/messageOf';
import { InvalidArgumentError } from '../../machine/InvalidArgumentError';
import type { TransitionTable } from '../../machine/TransitionTable';
import { AnsweredAlreadyError, answerFileName, markTaken, readAnswers, writeAnswer } from './approvalAnswers';
import { readBatchManifest, writeBatchManifest, type BatchManifest } from './batchManifest';
import { clearCapPause, readPauseFile, writeCapPause, type CapPause } from './capPause';
import { appendRaiseRequest, readRaiseRequests, setAsideRaises, type RaiseRequest } from './raiseRequests';
import { folderHeld, FolderLockedError, LOCK_FILE, lockFolder } from './lockFolder';
import { batchHeldMessage } from './batchHeldMessage';
import { openRunSink } from './openRunSink';
import { setAsideOverwritten } from './setAsideOverwritten';
import { attemptsBeside, attemptsByRunFile, FolderAttempts, nextAttemptName } from './attemptNames';
import { sameName } from './assertNoClash';
import type {
  ApprovalAnswer,
  KeptAnswer,
  RunSink,
  RunStore,
  StoreBatch,
  StoreBatchOptions,
  StoredBatch,
  StoredLines,
  StoredRun,
  StoredRunQuery,
} from './RunStore';
import { safeFileName, uniqueFileNames } from './safeFileName';

/**
 * A `RunStore` in a folder: each batch is a folder of it (`<root>/<batchId>`) laid out as a
 * `historyDir` batch's (`batch.json`, a `.jsonl` history file a run, `.interrupted` attempts,
 * `batch.answers/`), so every reader of a folder reads it too. `--store file:///path` names
 * one. Its lock is the folder's lock file (freed when its process dies); `listRuns` reads the
 * runs' files, as nothing keeps their facts apart.
 */
export class FileStore implements RunStore {
  /** `file:///…`: the folder of batches, as a URL. */
  readonly name: string;
  /** The folder of batches, absolute. */
  readonly root: string;

  constructor(root: string) {
    if (typeof root !== 'string' || root === '')
      throw new InvalidArgumentError('root', 'a folder path (each batch is a folder in it)', root);
    this.root = path.resolve(root);
    this.name = pathToFileURL(this.root).href;
  }

  migrate(): Promise<void> {
    try {
      fs.mkdirSync(this.root, { recursive: true });
    } catch (error) {
      return Promise.reject(
        new HistoryFileError('open_failed', this.root, `cannot create the store's folder: ${messageOf(error)}`, {
          cause: error,
        }),
      );
    }
    return Promise.resolve();
  }

  async openBatch(options: StoreBatchOptions): Promise<StoreBatch> {
    const { batchId, owner, overwrite, resume = false, shared = false, manifest } = options;
    const dir = this.#dir(batchId);
    const where = this.#where(batchId);
    await this.migrate();
    fs.mkdirSync(dir, { recursive: true });
    let lock: ReturnType<typeof lockFolder>;
    try {
      lock = lockFolder(dir, owner, { shared });
    } catch (error) {
      if (!(error instanceof FolderLockedError)) throw error;
      const held = error.owner;
      if (shared)
        throw new HistoryFileError(
          'open_failed',
          where,
          `the batch is another batch's (${held.batch}), not ${owner}'s: two batches never write one batch id; give this batch another id`,
          { cause: error },
        );
      const frees =
        held.host === hostname()
          ? 'its lock is freed when that process exits'
          : `if that batch is gone, remove ${path.join(dir, LOCK_FILE)}`;
      throw new HistoryFileError(
        'open_failed',
        where,
        batchHeldMessage(`${held.batch}, pid ${held.pid} on ${held.host}`, frees),
        { cause: error },
      );
    }
    let earlier: BatchManifest | undefined;
    try {
      if (shared) {
        earlier = await readBatchManifest(dir);
        if (earlier === undefined) {
          setAsideRaises(dir);
          writeBatchManifest(dir, withFiles(manifest));
          earlier = await readBatchManifest(dir);
        }
      } else if (resume) earlier = await readBatchManifest(dir);
      else {
        this.#clear(dir, where, withFiles(manifest), overwrite);
        // The raises asked of the batch of this id before are not this one's.
        setAsideRaises(dir);
        writeBatchManifest(dir, withFiles(manifest));
      }
    } catch (error) {
      lock.release();
      throw error;
    }
    // The manifest on disk is final once the batch is open: its run files are read once.
    const files = new Map(readManifestNow(dir)?.tasks.map((t) => [t.id, t.file]));
    const fileOf = (runId: string): string => path.join(dir, files.get(runId) ?? `${safeFileName(runId)}.jsonl`);
    // The attempts set aside: from one listing of the folder, kept up to date, for a batch this
    // process writes alone. A shared batch's other workers set attempts aside too, and a worker
    // asks for each job's run: its folder is listed only for a run whose first attempt is there
    // (so a shared batch does not see the later attempts of a run whose first was deleted by hand).
    const folder = shared ? undefined : new FolderAttempts(dir);
    const keptOf = (file: string): string[] =>
      folder !== undefined ? folder.of(file) : fs.existsSync(`${file}.interrupted`) ? attemptsBeside(file) : [];
    return {
      batchId,
      earlier,
      attempts: (runId) => Promise.resolve(attemptsOf(fileOf(runId), keptOf(fileOf(runId)))),
      setAside: (runId) => {
        const file = fileOf(runId);
        if (folder !== undefined) folder.setAside(file);
        else if (fs.existsSync(file)) fs.renameSync(file, nextAttemptName(file));
        return Promise.resolve();
      },
      openRun: (runId, sinkOptions: JsonlHistorySinkOptions, table: TransitionTable<string>): Promise<RunSink> => {
        try {
          return Promise.resolve(openRunSink(fileOf(runId), sinkOptions, table));
        } catch (error) {
          return Promise.reject(error as Error);
        }
      },
      close: () => {
        lock.release();
        return Promise.resolve();
      },
    };
  }

  readRun(batchId: string, runId: string): AsyncIterable<Uint8Array> {
    const dir = this.#dir(batchId);
    const where = `${this.#where(batchId)} run ${runId}`;
    const fileName = (): string => this.#fileName(dir, runId);
    return {
      async *[Symbol.asyncIterator]() {
        // The live attempt; of one set aside only when no other is left (its process died before a new one).
        const file = path.join(dir, fileName());
        const newest = attemptsOf(file, attemptsBeside(file))[0];
        if (newest === undefined) throw new HistoryFileError('not_found', where, 'no such run in the store');
        yield* newest.input;
      },
    };
  }

  async readBatch(batchId: string): Promise<StoredBatch | undefined> {
    const dir = this.#dir(batchId);
    const manifest = fs.existsSync(dir) ? await readBatchManifest(dir) : undefined;
    if (manifest === undefined) return undefined;
    const running = folderHeld(dir);
    const runs: Array<StoredBatch['runs'][number]> = [];
    const listed = fs.readdirSync(dir);
    const kept = attemptsByRunFile(listed);
    for (const { id, file } of runsOf(dir, manifest, listed)) {
      // The oldest first, as readers show them.
      const attempts = attemptsOf(
        path.join(dir, file),
        (kept.get(file) ?? []).map((n) => path.join(dir, n)),
      ).reverse();
      if (attempts.length === 0) continue;
      // The live attempt, else (its process died before a resume made one) the newest set aside.
      const run = attempts.at(-1)!;
      const setAside = attempts.slice(0, -1);
      runs.push({ runId: id, run: storedLines(run.name), setAside: setAside.map((a) => storedLines(a.name)) });
    }
    return { manifest, running, runs };
  }

  async listRuns(query: StoredRunQuery = {}): Promise<StoredRun[]> {
    const { batchId, outcome, failed, since, limit = 1000 } = query;
    const outcomes = outcome === undefined ? undefined : typeof outcome === 'string' ? [outcome] : outcome;
    const batches = batchId !== undefined ? [batchId] : this.#batchIds();
    const found: StoredRun[] = [];
    for (const id of batches) {
      const dir = this.#dir(id);
      const manifest = fs.existsSync(dir) ? await readBatchManifest(dir) : undefined;
      if (manifest === undefined) continue;
      const listed = fs.readdirSync(dir);
      const kept = attemptsByRunFile(listed);
      for (const { id: runId, file } of runsOf(dir, manifest, listed)) {
        const where = path.join(dir, file);
        if (!fs.existsSync(where)) continue;
        const earlier = (kept.get(file) ?? []).map((name) => ({ name: path.join(dir, name) }));
        const run = await storedRun(id, runId, where, earlier);
        if (since !== undefined && run.startedAt < since) continue;
        if (outcomes !== undefined && !outcomes.includes(run.outcome)) continue;
        if (failed === true && (run.outcome === 'incomplete' || run.reason === undefined)) continue;
        found.push(run);
      }
    }
    return found.sort((a, b) => b.startedAt - a.startedAt).slice(0, limit);
  }

  keepAnswer(batchId: string, answer: ApprovalAnswer): Promise<KeptAnswer | undefined> {
    const dir = this.#dir(batchId);
    try {
      writeAnswer(dir, answer);
      return Promise.resolve(undefined);
    } catch (error) {
      if (!(error instanceof AnsweredAlreadyError)) return Promise.reject(error as Error);
    }
    const kept = this.#answers(dir).find((a) => a.run === answer.run && a.callId === answer.callId);
    // Refused, then gone (another batch of this id overwrote it): said as answered, with no answer to show.
    return Promise.resolve(kept ?? { ...answer, taken: true });
  }

  readAnswers(batchId: string): Promise<KeptAnswer[]> {
    return Promise.resolve(this.#answers(this.#dir(batchId)));
  }

  markAnswerTaken(batchId: string, answer: ApprovalAnswer): Promise<void> {
    const dir = this.#dir(batchId);
    const file = answerFileName(answer.run, answer.callId);
    const waiting = readAnswers(dir).answers.find((a) => a.file === file && !a.taken);
    // Taken already, or answered anew since (another wait): left as it is.
    if (waiting !== undefined && waiting.waitingSince === answer.waitingSince) markTaken(dir, waiting);
    return Promise.resolve();
  }

  keepRaise(batchId: string, request: RaiseRequest): Promise<void> {
    return attempt(() => appendRaiseRequest(this.#dir(batchId), request));
  }

  readRaises(batchId: string): Promise<RaiseRequest[]> {
    // A line that is no raise is skipped here; `agent-sm raise <folder>` on the batch's folder names it.
    return attempt(() =>
      readRaiseRequests(this.#dir(batchId)).requests.map(({ maxCostUsd, at }) => ({ maxCostUsd, at })),
    );
  }

  keepPause(batchId: string, pause: CapPause | undefined): Promise<void> {
    const dir = this.#dir(batchId);
    return attempt(() => (pause === undefined ? clearCapPause(dir) : writeCapPause(dir, pause)));
  }

  readPause(batchId: string): Promise<CapPause | undefined> {
    return attempt(() => readPauseFile(this.#dir(batchId)));
  }

  close(): Promise<void> {
    return Promise.resolve();
  }

  /** Batch `batchId`'s folder: the id must be a name a folder takes as it is. */
  #dir(batchId: string): string {
    if (typeof batchId !== 'string' || batchId === '' || safeFileName(batchId) !== batchId)
      throw new InvalidArgumentError(
        'batchId',
        'a name a folder takes as it is ([A-Za-z0-9._-], not starting with . or -, at most 100 characters)',
        batchId,
      );
    return path.join(this.root, batchId);
  }

  #where(batchId: string): string {
    return `${this.name} batch ${batchId}`;
  }

  /** Run `runId`'s file name in batch folder `dir`: the manifest's, else the name a folder batch gives it. */
  #fileName(dir: string, runId: string): string {
    const manifest = readManifestNow(dir);
    return manifest?.tasks.find((t) => t.id === runId)?.file ?? `${safeFileName(runId)}.jsonl`;
  }

  #batchIds(): string[] {
    let names: string[];
    try {
      names = fs.readdirSync(this.root);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw error;
    }
    return names.filter((n) => safeFileName(n) === n && fs.existsSync(path.join(this.root, n, 'batch.json'))).sort();
  }

  #answers(dir: string): KeptAnswer[] {
    return readAnswers(dir)
      .answers.map(({ file: _file, ...answer }) => answer)
      .sort((a, b) => (a.run === b.run ? cmp(a.callId, b.callId) : cmp(a.run, b.run)));
  }

  /** Refuses the runs already there, or (with `overwrite`) sets each aside with its attempts, out of every reader's way. */
  #clear(dir: string, where: string, manifest: Omit<BatchManifest, 'type' | 'version'>, overwrite: boolean): void {
    // A run's file, or an attempt a resume set aside before the next one wrote it.
    const listed = fs.readdirSync(dir);
    const present = new Set(listed.map(sameName));
    const kept = attemptsByRunFile(listed, sameName);
    const held = manifest.tasks.filter((t) => present.has(sameName(t.file)) || kept.has(sameName(t.file)));
    if (held.length === 0) return;
    if (!overwrite)
      throw new HistoryFileError(
        'file_exists',
        where,
        `the batch already holds ${held.length === 1 ? 'run' : 'runs'} ${held.map((t) => JSON.stringify(t.id)).join(', ')}; give overwriteHistory: true to set them aside, or another batchId`,
      );
    for (const { file } of held) setAsideOverwritten(path.join(dir, file), kept);
  }
}

/** The manifest with each task's history file named as a folder batch names it. */
function withFiles(manifest: Omit<BatchManifest, 'type' | 'version'>): Omit<BatchManifest, 'type' | 'version'> {
  const names = uniqueFileNames(manifest.tasks.map((t) => t.id));
  return { ...manifest, tasks: manifest.tasks.map((t, i) => ({ id: t.id, file: `${names[i]!}.jsonl` })) };
}

/** The manifest as it is now, read at once (a run's file name, asked for as runs open). */
function readManifestNow(dir: string): BatchManifest | undefined {
  try {
    return JSON.parse(fs.readFileSync(path.join(dir, 'batch.json'), 'utf8')) as BatchManifest;
  } catch {
    return undefined;
  }
}

/** The batch's runs: its manifest's tasks, then the run files it does not list, by name. */
function runsOf(
  dir: string,
  manifest: BatchManifest,
  names: readonly string[] = fs.readdirSync(dir),
): Array<{ id: string; file: string }> {
  const runs = manifest.tasks.map((t) => ({ id: t.id, file: t.file }));
  const listed = new Set(runs.map((r) => r.file));
  const others = names.filter((n) => n.endsWith('.jsonl') && !listed.has(n)).sort();
  return [...runs, ...others.map((file) => ({ id: file.slice(0, -'.jsonl'.length), file }))];
}

/** A run's attempts, the newest first: its live file, then those a resume set aside (`kept`, paths, the oldest first). */
function attemptsOf(file: string, kept: readonly string[]): Array<{ name: string; input: AsyncIterable<Uint8Array> }> {
  const names = [...(fs.existsSync(file) ? [file] : []), ...[...kept].reverse()];
  return names.map((name) => ({ name, input: linesOf(name, 0) }));
}

/**
 * An attempt's lines for readers that follow it: each read after the last one's lines goes on
 * from the byte where that read ended, so a follower polling a long run reads each byte once.
 */
function storedLines(name: string): StoredLines {
  let seen = { lines: 0, offset: 0, file: undefined as number | undefined };
  return {
    name,
    read: (afterLine = 0) => ({
      async *[Symbol.asyncIterator]() {
        checkAfterLine(afterLine);
        const from = afterLine >= seen.lines ? seen : { lines: 0, offset: 0, file: undefined };
        const read = wholeLines(name, afterLine, from);
        seen = read.end;
        if (read.bytes !== undefined) yield read.bytes;
      },
    }),
  };
}

/** The whole lines of `file` after the first `afterLine`, as they are now (`storedLines`, without its memory). */
function linesOf(file: string, afterLine: number): AsyncIterable<Uint8Array> {
  return {
    async *[Symbol.asyncIterator]() {
      checkAfterLine(afterLine);
      const read = wholeLines(file, afterLine, { lines: 0, offset: 0, file: undefined });
      if (read.bytes !== undefined) yield read.bytes;
    },
  };
}

function checkAfterLine(afterLine: number): void {
  if (!(Number.isSafeInteger(afterLine) && afterLine >= 0))
    throw new InvalidArgumentError('afterLine', 'a whole number of lines, 0 or more', afterLine);
}

/** Where a read of a file ended: its whole lines, the byte after them, and the file (its inode). */
interface ReadEnd {
  lines: number;
  offset: number;
  file: number | undefined;
}

/**
 * The whole lines of `file` after the first `afterLine`, read from `from` (a point known to be a
 * line's start, unless the file there is another one now: a resume set the old one aside). A
 * line still being written (no newline yet) is left for the next read, as a store gives
 * committed lines only.
 */
function wholeLines(file: string, afterLine: number, from: ReadEnd): { bytes: Uint8Array | undefined; end: ReadEnd } {
  const fd = fs.openSync(file, 'r');
  try {
    const { ino, size } = fs.fstatSync(fd);
    const start = from.file === ino && from.offset <= size ? from : { lines: 0, offset: 0, file: ino };
    const bytes = Buffer.alloc(size - start.offset);
    let got = 0;
    while (got < bytes.length) {
      const n = fs.readSync(fd, bytes, got, bytes.length - got, start.offset + got);
      if (n === 0) break;
      got += n;
    }
    const tail = bytes.subarray(0, got);
    let at = 0;
    let lines = start.lines;
    for (; lines < afterLine; lines++) {
      const end = tail.indexOf(0x0a, at);
      if (end === -1) return { bytes: undefined, end: { lines, offset: start.offset + at, file: ino } };
      at = end + 1;
    }
    const last = tail.lastIndexOf(0x0a);
    if (last < at) return { bytes: undefined, end: { lines, offset: start.offset + at, file: ino } };
    let count = lines;
    for (let i = tail.indexOf(0x0a, at); i !== -1 && i <= last; i = tail.indexOf(0x0a, i + 1)) count++;
    return { bytes: tail.subarray(at, last + 1), end: { lines: count, offset: start.offset + last + 1, file: ino } };
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * Run `runId` of batch `batchId` as `listRuns` lists it, from its file: 0 spent until it ends.
 * Its money over every attempt (`earlier`: those a resume set aside, the oldest first), as a
 * batch's readers count it.
 */
async function storedRun(
  batchId: string,
  runId: string,
  file: string,
  earlier: readonly AttemptLines[],
): Promise<StoredRun> {
  let startedAt: number | undefined;
  // Read past a damaged line, as the readers of a batch read it: one run's lines never fail the list.
  const facts = await readRunFile(file, { salvage: true, onWarning: ignore }, (entry) => {
    if (startedAt !== undefined) return;
    if (entry.kind === 'meta') startedAt = entry.meta.startedAt;
    else if (entry.kind === 'record') startedAt = entry.record.at - entry.record.durationMs;
  });
  startedAt ??= fs.statSync(file).mtimeMs;
  if (!facts.ended)
    return {
      batchId,
      runId,
      startedAt,
      outcome: 'incomplete',
      reason: undefined,
      ...NO_MONEY,
      uncertain: [],
      unpriced: [],
      calls: 0,
      durationMs: 0,
    };
  const money = earlier.length === 0 ? facts : spendOfRun(facts, facts.attempt, await attemptSpends(earlier));
  return {
    batchId,
    runId,
    startedAt,
    outcome: facts.outcome,
    reason: facts.reason,
    costUsd: money.costUsd,
    uncertainUsd: money.uncertainUsd,
    releasedUsd: money.releasedUsd,
    uncertain: [...money.uncertain],
    unpricedCalls: money.unpricedCalls,
    unpriced: [...money.unpriced],
    calls: facts.usage?.llmCalls ?? 0,
    durationMs: facts.durationMs,
  };
}

/** `work` done now, its result or its error as a promise. */
function attempt<T>(work: () => T): Promise<T> {
  try {
    return Promise.resolve(work());
  } catch (error) {
    return Promise.reject(error as Error);
  }
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
