import type { BatchReport } from '../batch/runBatch';
import type { RunLines, BatchSource } from '../batch/reading/BatchSource';
import { readBatchSource } from '../batch/reading/readBatchFolder';
import { skippedRun } from '../batch/skippedRun';
import type { RunOutcome } from '../batch/BatchReport';
import type { HistoryWarning } from '../history/HistoryEntry';
import { HistoryFileError } from '../history/HistoryFileError';
import { loadHistory } from '../history/loadHistory';
import { messageOf } from '../internal/messageOf';
import { BatchPageBuilder } from './renderBatchPage';
import { collectRun } from './collectRun';

/** How the runs of a batch's page are read. */
export interface BatchPageReading {
  salvage: boolean;
  maxLineBytes?: number;
}

/**
 * A task of the manifest with no history: while the batch runs it has not started yet
 * (`pending`); once the batch has ended (or was killed) it never started (`skipped`).
 */
function neverStarted(id: string, running: boolean): BatchReport['runs'][number] {
  // `pending` is a reader's word, not a `RunOutcome` a batch reports: the page shows the outcome it is given.
  if (running)
    return {
      ...skippedRun(id, new Error('not started yet: the batch still runs, and starts it when a slot is free')),
      outcome: 'pending' as RunOutcome,
    };
  return skippedRun(
    id,
    new Error('never started: the batch wrote no history file for it (interrupted before it began?)'),
  );
}

/**
 * Adds a run of a batch to its page: its history (`lines`) with the attempts a resume set aside,
 * or with `run` only (no history). A history that cannot be read is listed as unreadable, with
 * why in `warnings`.
 */
export async function addBatchRun(
  builder: BatchPageBuilder,
  lines: RunLines | undefined,
  interrupted: readonly RunLines[],
  run: BatchReport['runs'][number] | undefined,
  reading: BatchPageReading,
  warnings: string[],
): Promise<void> {
  if (lines === undefined) return builder.add({ report: run! });
  const file = lines.name;
  let loaded;
  try {
    loaded = await loadHistory(file, { ...reading, ...inputOf(lines) });
  } catch (error) {
    warnings.push(`${messageOf(error)} (listed as unreadable)`);
    if (run === undefined) return builder.addUnreadable(file, messageOf(error));
    return builder.add({ report: run, file });
  }
  for (const w of loaded.warnings) warnings.push(w.message);
  const cutOffAttempts = [];
  for (const attempt of interrupted) cutOffAttempts.push(await readCutOffAttempt(attempt, reading));
  builder.add({
    history: loaded.entries,
    file,
    ...(run === undefined ? {} : { report: run }),
    ...(cutOffAttempts.length > 0 ? { cutOffAttempts } : {}),
  });
}

/**
 * The page of a batch read alone (a folder, or a store's batch): each run as its history says,
 * a task that never started as such, and how each run stands and why the batch stopped, as
 * `agent-sm inspect` reads them.
 */
export async function buildBatchPage(
  source: BatchSource,
  reading: BatchPageReading,
  maxDataChars: number | undefined,
  warnings: string[],
): Promise<{ html: string; runs: number }> {
  if (source.manifest === undefined && source.runs.length === 0)
    throw new HistoryFileError('not_found', source.where, 'holds no history files (*.jsonl)');
  const builder = new BatchPageBuilder(maxDataChars);
  for (const run of source.runs)
    if (run.lines === undefined) builder.add({ report: neverStarted(run.id, source.running) });
    else await addBatchRun(builder, run.lines, run.interrupted, undefined, reading, warnings);
  // Its warnings are the ones just noted, run by run: not noted twice.
  const ignore = (_: HistoryWarning): void => undefined;
  const batch = await readBatchSource(source, { ...reading, onWarning: ignore });
  const html = builder.render({
    source: source.where,
    failures: batch.runs,
    ...(batch.stopped === undefined ? {} : { stopped: { message: batch.stopped } }),
  });
  return { html, runs: builder.size };
}

/** `{ input }` for a store's lines, nothing for a file. */
function inputOf(lines: RunLines): { input?: AsyncIterable<Uint8Array> } {
  return lines.input === undefined ? {} : { input: lines.input() };
}

/**
 * What a cut-off attempt says: what it spent (undefined when it carries no usage or cannot be
 * read: a crash can leave anything) and when its last move was, the crash's moment.
 */
async function readCutOffAttempt(
  attempt: RunLines,
  reading: BatchPageReading,
): Promise<{ costUsd: number | undefined; endedAt: number | undefined }> {
  try {
    const facts = collectRun(
      (await loadHistory(attempt.name, { ...reading, salvage: true, ...inputOf(attempt) })).entries,
    );
    const said = facts.usage.length > 0 || facts.spend.costUsd > 0;
    return { costUsd: said ? facts.spend.costUsd : undefined, endedAt: facts.summary.endedAt ?? undefined };
  } catch {
    return { costUsd: undefined, endedAt: undefined };
  }
}
