import * as fs from 'node:fs';
import * as path from 'node:path';
import type { BatchReport } from '../batch/runBatch';
import type { HistoryWarning } from '../history/HistoryEntry';
import { HistoryFileError } from '../history/HistoryFileError';
import { readHistoryInto } from '../history/loadHistory';
import { messageOf } from '../internal/messageOf';
import { InvalidArgumentError } from '../machine/InvalidArgumentError';
import { BatchPageBuilder } from './renderBatchPage';
import { folderBatchSource, storeBatchSource } from '../batch/reading/BatchSource';
import { attemptsByRunFile } from '../batch/keeping/attemptNames';
import type { RunStore } from '../batch/keeping/RunStore';
import { RunPageBuilder } from './renderRunPage';
import { addBatchRun, buildBatchPage } from './buildBatchPage';

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

  const { batch } = options;
  if (batch === undefined) {
    // A folder alone: how each run ended and why the batch stopped, as `agent-sm inspect` reads them.
    const source = await folderBatchSource(target);
    if (source === undefined) throw new HistoryFileError('not_found', target, 'holds no history files (*.jsonl)');
    return { kind: 'batch', ...(await buildBatchPage(source, reading, options.maxDataChars, warnings)), warnings };
  }
  if (typeof batch !== 'object' || batch === null || !Array.isArray(batch.runs))
    throw new InvalidArgumentError('options.batch', 'a BatchReport from runBatch()', batch);
  const builder = new BatchPageBuilder(options.maxDataChars);
  const kept = attemptsByRunFile(await fs.promises.readdir(target));
  for (const run of batch.runs) {
    const file = run.historyFile;
    // A resumed batch keeps each cut-off attempt beside the run's file: the run was resumed after a crash.
    const interrupted =
      file === undefined
        ? []
        : (kept.get(path.basename(file)) ?? []).map((n) => ({ name: path.join(path.dirname(file), n) }));
    await addBatchRun(builder, file === undefined ? undefined : { name: file }, interrupted, run, reading, warnings);
  }
  const html = builder.render({
    source: target,
    limits: batch.limits,
    concurrency: batch.concurrency,
    durationMs: batch.durationMs,
    ...(batch.stopped === undefined ? {} : { stopped: batch.stopped }),
  });
  return { kind: 'batch', html, runs: batch.runs.length, warnings };
}

/**
 * The HTML page of batch `batchId` kept in `store`, as `buildHtmlReport` makes it for the
 * batch's history folder (`agent-sm report --store URL <batchId>`): the runs' lines are read
 * from the store, one run at a time. Throws `HistoryFileError` when the store holds no such batch.
 */
export async function buildStoreBatchReport(
  store: RunStore,
  batchId: string,
  options: Pick<BuildHtmlReportOptions, 'maxDataChars' | 'salvage' | 'maxLineBytes'> = {},
): Promise<HtmlReport> {
  const reading = {
    salvage: options.salvage === true,
    ...(options.maxLineBytes === undefined ? {} : { maxLineBytes: options.maxLineBytes }),
  };
  const warnings: string[] = [];
  const source = await storeBatchSource(store, batchId);
  return { kind: 'batch', ...(await buildBatchPage(source, reading, options.maxDataChars, warnings)), warnings };
}
