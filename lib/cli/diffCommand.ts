import * as fs from 'node:fs';
import type { Command } from 'commander';
import { folderBatchSource, storeBatchSource, type BatchSource } from '../batch/reading/BatchSource';
import { diffBatches, type BatchDiff, type TaskPair } from '../batch/reading/diffBatches';
import { readBatchForDiff } from '../batch/reading/readBatchForDiff';
import type { FolderRun } from '../batch/reading/readBatchFolder';
import type { RunStore } from '../batch/keeping/RunStore';
import { HistoryFileError } from '../history/HistoryFileError';
import type { DivergenceKind } from '../history/diffStep';
import { diffRunFiles, type RunDiff, type RunDiffInput, type RunDiffOptions } from '../history/diffRunFiles';
import { escapeControl } from '../internal/escapeControl';
import { messageOf } from '../internal/messageOf';
import { renderBatchDiffPage, renderRunDiffPage } from '../report/renderDiffPage';
import type { CommandContext } from './CommandContext';
import { EXIT } from './EXIT';
import { formatBatchDiff } from './formatBatchDiff';
import { formatRunDiff } from './formatRunDiff';
import { loadOptions, type StoreReading } from './readingOptions';
import { runInFolder } from './runInFolder';
import { safeJson } from './safeJson';
import { storeFor, storeHelp, STORE_FLAG } from './storeCommands';
import { UsageError } from './UsageError';

/** Changed tasks of a batch diff whose first divergence is looked up (each costs reading both runs up to it). */
const LOOKED_UP = 20;

type DiffOptions = StoreReading & { json?: boolean; html?: string };

/**
 * `agent-sm diff <a> <b> [task]`: two runs (history files, a task of two batch folders, or
 * with `--store` a task of two stored batches) compared step by step to their first
 * divergence; or two batches (folders, or with `--store` batch ids) compared task by task.
 * Exit 0 the same, 1 they differ, 2 something could not be read.
 */
export function addDiffCommand(program: Command, ctx: CommandContext): void {
  const { opened, warn, exit } = ctx;
  program
    .command('diff')
    .description(
      'Compare two runs or two batches, as after a change of prompt, model, tool or library version. Two history files: where they first differ (a request, a response, a tool result or a move), with context, then the changes in outcome, calls, tokens, money, wall time and time per state. Two batch folders: regressions (ended well in A, not in B) with both reasons, improvements, the other changes by cost, tasks on one side only, totals. Timestamps, durations and run ids are never compared. Exit 0 when the same, 1 when they differ, 2 when something could not be read.',
    )
    .argument('<a>', 'the run before: a history file (.jsonl), or a batch folder (with --store: a batch id)')
    .argument('<b>', 'the run after, of the same kind')
    .argument('[task]', 'with two folders (or two stored batches): compare this task of each, run against run')
    .option(STORE_FLAG, storeHelp('a batch id, and so is <b>'))
    .option('--json', 'print the diff as JSON')
    .option(
      '--html <file>',
      'write one self-contained HTML page of the diff to <file> (two runs side by side from the divergence on), and print its path',
    )
    .action(async (a: string, b: string, task: string | undefined, opts: DiffOptions) => {
      const read = { ...loadOptions(opts), onWarning: warn };
      if (opts.store !== undefined) {
        const store = await storeFor(opts.store, { opened });
        if (task !== undefined) {
          const pair = [storedRun(store, a, task), storedRun(store, b, task)] as const;
          return exit(showRuns(await diffRunFiles(pair[0], pair[1], read), opts, ctx));
        }
        const sources = [await storeBatchSource(store, a), await storeBatchSource(store, b)] as const;
        return exit(
          await showBatches(sources, opts, ctx, (side, run) => storedRun(store, side === 'a' ? a : b, run.id)),
        );
      }
      const folderA = isFolder(a);
      const folderB = isFolder(b);
      if (folderA !== folderB)
        throw new UsageError(
          `${a} is ${folderA ? 'a folder' : 'not a folder'} and ${b} is ${folderB ? 'a folder' : 'not a folder'}: give two history files or two batch folders`,
        );
      if (!folderA || task !== undefined) {
        const fileA = await runInFolder(a, task, 'diff');
        const fileB = await runInFolder(b, task, 'diff');
        return exit(showRuns(await diffRunFiles({ name: fileA }, { name: fileB }, read), opts, ctx));
      }
      const sourceA = await folderBatchSource(a);
      const sourceB = await folderBatchSource(b);
      if (sourceA === undefined) throw noBatch(a);
      if (sourceB === undefined) throw noBatch(b);
      return exit(await showBatches([sourceA, sourceB], opts, ctx, (_side, run) => ({ name: run.file! })));
    });
}

function noBatch(dir: string): HistoryFileError {
  return new HistoryFileError('not_found', dir, 'holds no batch: no batch.json and no history files (*.jsonl)');
}

function isFolder(target: string): boolean {
  try {
    return fs.statSync(target).isDirectory();
  } catch {
    return false; // not there: the reader says so, naming it
  }
}

function storedRun(store: RunStore, batchId: string, runId: string): RunDiffInput {
  return { name: `${store.name} run ${runId} of batch ${batchId}`, input: () => store.readRun(batchId, runId) };
}

/** Prints a run diff as asked; returns the exit code. */
function showRuns(diff: RunDiff, opts: DiffOptions, ctx: CommandContext): number {
  if (opts.html !== undefined) writePage(opts.html, renderRunDiffPage(diff));
  if (opts.json === true) ctx.io.stdout(`${safeJson({ kind: 'runs', ...diff })}\n`);
  else if (opts.html !== undefined) ctx.io.stdout(`${escapeControl(opts.html)}\n`);
  else ctx.io.stdout(formatRunDiff(diff));
  return diff.same ? EXIT.ok : EXIT.differs;
}

/**
 * Reads both batches (one pass each), compares them, looks up where the runs of the first
 * changed tasks diverge, and prints as asked; returns the exit code: 2 when a run of either
 * could not be read (each named on stderr).
 */
async function showBatches(
  [sourceA, sourceB]: readonly [BatchSource, BatchSource],
  opts: DiffOptions,
  ctx: CommandContext,
  linesOf: RunLinesOf,
): Promise<number> {
  const read = { ...loadOptions(opts), onWarning: ctx.warn };
  const a = await readBatchForDiff(sourceA, read);
  const b = await readBatchForDiff(sourceB, read);
  const diff = diffBatches(a.folder, a.facts, b.folder, b.facts);
  const divergences = await lookUpDivergences(diff, a.folder.runs, b.folder.runs, read, linesOf);
  if (opts.html !== undefined) writePage(opts.html, renderBatchDiffPage(diff));
  if (opts.json === true)
    ctx.io.stdout(`${safeJson({ kind: 'batches', ...diff, divergences: Object.fromEntries(divergences) })}\n`);
  else if (opts.html !== undefined) ctx.io.stdout(`${escapeControl(opts.html)}\n`);
  else ctx.io.stdout(formatBatchDiff(diff, divergences));
  const unreadable = [...a.folder.runs, ...b.folder.runs].filter((r) => r.outcome === 'unreadable');
  for (const run of unreadable) ctx.io.stderr(`agent-sm: error: ${escapeControl(run.reason ?? run.id)}\n`);
  if (unreadable.length > 0) return EXIT.error;
  return diff.same ? EXIT.ok : EXIT.differs;
}

/** How a batch's run is read again: its file, or its store's lines. */
type RunLinesOf = (side: 'a' | 'b', run: FolderRun) => RunDiffInput;

/** Where the runs of the first `LOOKED_UP` tasks whose steps differ first diverge, each read up to there. */
async function lookUpDivergences(
  diff: BatchDiff,
  runsA: readonly FolderRun[],
  runsB: readonly FolderRun[],
  read: RunDiffOptions,
  linesOf: RunLinesOf,
): Promise<Map<string, DivergenceKind>> {
  const out = new Map<string, DivergenceKind>();
  const byIdA = new Map(runsA.map((r) => [r.id, r]));
  const byIdB = new Map(runsB.map((r) => [r.id, r]));
  const readable = (run: FolderRun | undefined): run is FolderRun =>
    run?.file !== undefined && run.outcome !== 'unreadable';
  const pairs: TaskPair[] = [...diff.regressions, ...diff.improvements, ...diff.changed].filter((p) => p.stepsDiffer);
  for (const pair of pairs.slice(0, LOOKED_UP)) {
    const runA = byIdA.get(pair.id);
    const runB = byIdB.get(pair.id);
    if (!readable(runA) || !readable(runB)) continue;
    try {
      const found = await diffRunFiles(linesOf('a', runA), linesOf('b', runB), {
        ...read,
        onWarning: () => undefined,
        context: 0,
        untilDivergence: true,
      });
      if (found.divergence !== undefined) out.set(pair.id, found.divergence.kind);
    } catch {
      // Read whole a moment ago; one that fails now (changed under us) is left without its divergence.
    }
  }
  return out;
}

function writePage(file: string, html: string): void {
  try {
    fs.writeFileSync(file, html);
  } catch (error) {
    throw new Error(`cannot write the diff page to ${file}: ${messageOf(error)}`, { cause: error });
  }
}
