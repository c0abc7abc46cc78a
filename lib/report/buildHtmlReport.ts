import * as fs from 'node:fs';
import * as path from 'node:path';
import type { BatchReport } from '../batch/runBatch';
import type { HistoryWarning } from '../history/HistoryEntry';
import { HistoryFileError } from '../history/HistoryFileError';
import { loadHistory, readHistoryInto } from '../history/loadHistory';
import { messageOf } from '../internal/messageOf';
import { InvalidArgumentError } from '../machine/InvalidArgumentError';
import { BatchPageBuilder } from './renderBatchPage';
import { readBatchManifest } from '../batch/batchManifest';
import { readBatchFolder, type BatchFolder } from '../batch/readBatchFolder';
import { emptyUsage } from '../agent/UsageTotals';
import { RunPageBuilder } from './renderRunPage';
import { collectRun } from './collectRun';

/** Options of `buildHtmlReport`. */
export interface BuildHtmlReportOptions {
  /**
   * The batch's own report, when you have it (`runBatch`'s result): its caps, concurrency and
   * duration head the page, and runs with no history file (skipped, or whose agent never
   * started) are listed with why. Only for a folder.
   */
  batch?: BatchReport;
  /** Characters of each move's data kept in the page. Default 10,000 for a run, 300 per move for a batch. */
  maxDataChars?: number;
  /** Skip corrupt lines of the history files (listed in the warnings) and read the rest. Default false. */
  salvage?: boolean;
  /** The longest line read, in bytes (`loadHistory`'s `maxLineBytes`). Default: the limit the writer keeps to. */
  maxLineBytes?: number;
  /**
   * Read one run's lines from this stream (a store's run: `store.readRun(batchId, runId)`)
   * instead of a file: the run's page is made, and `target` only names the run.
   */
  input?: AsyncIterable<Uint8Array>;
}

/** What `buildHtmlReport` made. */
export interface HtmlReport {
  /** `run` for a history file, `batch` for a folder of them. */
  readonly kind: 'run' | 'batch';
  /** The page: one self-contained HTML file. */
  readonly html: string;
  /** Runs on the page. */
  readonly runs: number;
  /** Odd but readable lines (such as a cut last line), and files of a batch that could not be read at all. */
  readonly warnings: readonly string[];
}

/** A task of the manifest with no history file: the batch ended (or was killed) before it started. */
function neverStarted(id: string): BatchReport['runs'][number] {
  return {
    id,
    outcome: 'skipped',
    usage: emptyUsage(),
    durationMs: 0,
    transitions: 0,
    error: new Error('never started: the batch wrote no history file for it (interrupted before it began?)'),
  };
}

/**
 * The HTML report `agent-sm report` writes: for a history file, the run's page
 * (`renderRunPage`); for a folder, the batch's page (`renderBatchPage`) over every `*.jsonl`
 * in it, read one at a time. A file of a batch that cannot be read is listed as
 * `unreadable` with why, and the page is still made; a single file that cannot be read throws
 * `HistoryFileError`.
 */
export async function buildHtmlReport(target: string, options: BuildHtmlReportOptions = {}): Promise<HtmlReport> {
  if (typeof target !== 'string' || target === '')
    throw new InvalidArgumentError('path', 'a history file or a folder of them', target);
  if (typeof options !== 'object' || options === null) throw new InvalidArgumentError('options', 'an object', options);
  let stat: Pick<fs.Stats, 'isDirectory'>;
  try {
    stat = options.input !== undefined ? { isDirectory: () => false } : await fs.promises.stat(target);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT')
      throw new HistoryFileError('not_found', target, 'no such file or folder', { cause: error });
    throw new HistoryFileError('read_failed', target, `cannot read: ${messageOf(error)}`, { cause: error });
  }
  const reading = {
    salvage: options.salvage === true,
    ...(options.maxLineBytes === undefined ? {} : { maxLineBytes: options.maxLineBytes }),
  };
  const warnings: string[] = [];
  const note = (w: HistoryWarning): void => void warnings.push(w.message);
  if (!stat.isDirectory()) {
    if (options.batch !== undefined)
      throw new InvalidArgumentError(
        'options.batch',
        'a batch report only with a folder of history files',
        options.batch,
      );
    // Streamed: the page keeps the moves and the folded conversation, never the journal's lines.
    const builder = new RunPageBuilder({
      file: target,
      ...(options.maxDataChars === undefined ? {} : { maxDataChars: options.maxDataChars }),
    });
    const input = options.input === undefined ? {} : { input: options.input };
    await readHistoryInto(target, { ...reading, ...input, onWarning: note }, (entry) => builder.add(entry));
    return { kind: 'run', html: builder.render(), runs: 1, warnings };
  }

  const builder = new BatchPageBuilder(options.maxDataChars);
  const names = await fs.promises.readdir(target);
  const add = async (file: string | undefined, run: BatchReport['runs'][number] | undefined): Promise<void> => {
    if (file === undefined) return builder.add({ report: run! });
    let loaded;
    try {
      loaded = await loadHistory(file, reading);
    } catch (error) {
      warnings.push(`${messageOf(error)} (listed as unreadable)`);
      if (run === undefined) return builder.addUnreadable(file, messageOf(error));
      return builder.add({ report: run, file });
    }
    loaded.warnings.forEach(note);
    // A resumed batch keeps each cut-off attempt beside the run's file: the run was resumed after a crash.
    const base = path.basename(file);
    const attempts = names
      .filter((n) => n === `${base}.interrupted` || n.startsWith(`${base}.interrupted.`))
      .sort()
      .map((n) => path.join(path.dirname(file), n));
    const cutOffAttempts = [];
    for (const attempt of attempts) cutOffAttempts.push(await readCutOffAttempt(attempt, reading));
    builder.add({
      history: loaded.entries,
      file,
      ...(run === undefined ? {} : { report: run }),
      ...(cutOffAttempts.length > 0 ? { cutOffAttempts } : {}),
    });
  };
  const { batch } = options;
  // A folder alone: how each run ended and why the batch stopped, as `agent-sm inspect` reads them.
  let folder: BatchFolder | undefined;
  if (batch !== undefined) {
    if (typeof batch !== 'object' || batch === null || !Array.isArray(batch.runs))
      throw new InvalidArgumentError('options.batch', 'a BatchReport from runBatch()', batch);
    for (const run of batch.runs) await add(run.historyFile, run);
  } else {
    const files = names.filter((name) => name.endsWith('.jsonl')).sort();
    const manifest = await readBatchManifest(target);
    if (files.length === 0 && manifest === undefined)
      throw new HistoryFileError('not_found', target, 'holds no history files (*.jsonl)');
    // The manifest lists every task of the batch: one that never wrote its file is shown as such.
    const present = new Set(files);
    for (const task of manifest?.tasks ?? []) {
      if (present.delete(task.file)) await add(path.join(target, task.file), undefined);
      else builder.add({ report: neverStarted(task.id) });
    }
    for (const name of present) await add(path.join(target, name), undefined);
    // Its warnings are the ones just noted, file by file: not noted twice.
    folder = await readBatchFolder(target, { ...reading, onWarning: () => undefined });
  }
  const html = builder.render({
    source: target,
    ...(batch === undefined
      ? {
          ...(folder === undefined ? {} : { failures: folder.runs }),
          ...(folder?.stopped === undefined ? {} : { stopped: { message: folder.stopped } }),
        }
      : {
          limits: batch.limits,
          concurrency: batch.concurrency,
          durationMs: batch.durationMs,
          ...(batch.stopped === undefined ? {} : { stopped: batch.stopped }),
        }),
  });
  return { kind: 'batch', html, runs: batch?.runs.length ?? builder.size, warnings };
}

/**
 * What a cut-off attempt's file says: what it spent (undefined when it carries no usage or
 * cannot be read: a crash can leave anything) and when its last move was, the crash's moment.
 */
async function readCutOffAttempt(
  file: string,
  reading: { salvage: boolean; maxLineBytes?: number },
): Promise<{ costUsd: number | undefined; endedAt: number | undefined }> {
  try {
    const facts = collectRun((await loadHistory(file, { ...reading, salvage: true })).entries);
    const said = facts.usage.length > 0 || facts.spend.costUsd > 0;
    return { costUsd: said ? facts.spend.costUsd : undefined, endedAt: facts.summary.endedAt ?? undefined };
  } catch {
    return { costUsd: undefined, endedAt: undefined };
  }
}
