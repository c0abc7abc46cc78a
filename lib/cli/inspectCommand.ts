import * as fs from 'node:fs';
import type { Command } from 'commander';
import { formatSummary } from '../history/formatSummary';
import type { HistoryEntry, HistoryWarning } from '../history/HistoryEntry';
import { HistorySummarizer } from '../history/summarizeHistory';
import { RunFactsCollector } from '../history/runFacts';
import type { RunSpend } from '../history/RunSpend';
import { formatSpend } from '../internal/formatSpend';
import { escapeControl } from '../internal/escapeControl';
import { safeJson } from './safeJson';
import { followFile } from './followFile';
import { inspectFolder, inspectStoreBatch } from './inspectFolder';
import { formatMoveLine, MOVE_LINE_HEADER } from './formatMoveLine';
import { runSource, STORE_FLAG, storeFor, storeHelp } from './storeCommands';
import { positiveInteger } from './cliArguments';
import type { ReadingOptions } from './readingOptions';
import type { CommandContext, ReadOptions } from './CommandContext';
import { EXIT } from './EXIT';
import { UsageError } from './UsageError';

/** `agent-sm inspect <path> [runId]`: a run's summary (the failure first), as it is or followed as it grows, or a batch's folder. */
export function addInspectCommand(program: Command, ctx: CommandContext): void {
  const { io, opened, warn, read, shown, exit } = ctx;
  program
    .command('inspect')
    .description(
      "Summarize a run: the failure first (where, why, the moves before it), then its turns, time per state, forced and rejected moves. For a batch's folder: its runs, failures first, and its totals.",
    )
    .argument(
      '<path>',
      "history file (.jsonl) written by JsonlHistorySink; - reads standard input; a batch's history folder lists its runs, failures first, and its totals",
    )
    .argument(
      '[runId]',
      'a run of the folder (or, with --store, of the batch): inspect its history; without it, the batch',
    )
    .option(STORE_FLAG, storeHelp("the batch's id"))
    .option('--json', 'print the summary as JSON')
    .option('--last <n>', 'how many moves to show before the failure or the end', positiveInteger, 10)
    .option('--exit-code', 'exit 1 when the run (of a folder: any run) failed or is incomplete, for scripts')
    .option(
      '--follow',
      'print each move as it is appended (a growing file, or standard input as lines arrive) until the run ends (a move into a terminal state), the input ends or Ctrl-C, then the summary',
    )
    .action(
      async (
        target: string,
        runId: string | undefined,
        opts: ReadingOptions & { store?: string; json?: boolean; last: number; exitCode?: boolean; follow?: boolean },
      ) => {
        if (opts.store !== undefined && opts.follow === true)
          throw new UsageError('--follow follows a file; a run in a store is read as it is now');
        if (opts.store === undefined && runId === undefined && target !== '-' && isFolder(target)) {
          if (opts.follow === true)
            throw new UsageError(
              '--follow follows one run: name it (inspect --follow <folder> <runId>), or use watch <folder>',
            );
          exit(await inspectFolder(target, opts, { stdout: io.stdout, stderr: io.stderr, warn }, safeJson));
          return;
        }
        if (opts.store !== undefined && runId === undefined) {
          const store = await storeFor(opts.store, { opened });
          exit(await inspectStoreBatch(store, target, opts, { stdout: io.stdout, stderr: io.stderr, warn }, safeJson));
          return;
        }
        const { file, input } = await runSource(target, runId, opts.store, 'inspect', { opened });
        const summarizer = new HistorySummarizer({ lastMoves: opts.last });
        const warnings: HistoryWarning[] = [];
        const follow = opts.follow === true;
        if (follow && opts.json === true)
          throw new UsageError('--follow prints moves as text; it cannot be combined with --json');
        // What the run spent, by the ledger's rule (the rule of inspect <folder>), the figures apart.
        const spent = new RunFactsCollector({ retain: false });
        let take = (entry: HistoryEntry): void => {
          summarizer.add(entry);
          spent.add(entry);
        };
        const readOptions: ReadOptions = { ...opts, onWarning: (w) => (warnings.push(w), warn(w)) };
        if (input !== undefined) readOptions.input = input;
        if (follow) {
          io.stdout(`${MOVE_LINE_HEADER}\n`);
          // The run has ended when its last move ended a turn (a terminal state): a file is followed until then.
          const facts = new RunFactsCollector({ retain: false });
          let ended = false;
          take = (entry) => {
            summarizer.add(entry);
            spent.add(entry);
            const turn = facts.add(entry);
            if (turn !== undefined || entry.kind === 'record') ended = turn?.end === 'terminal';
            const text = formatMoveLine(entry);
            if (text !== undefined) io.stdout(`${text}\n`);
          };
          if (file !== '-')
            readOptions.input = followFile(file, {
              signal: io.signal ?? new AbortController().signal,
              done: () => ended,
              onRestart: (why) =>
                io.stderr(`agent-sm: warning: ${shown(file)}: ${why}; reading it again from the start\n`),
            });
        }
        const lines = await read(file, readOptions, take);
        if (lines === 0) io.stderr(`agent-sm: ${shown(file)} is empty: it holds no history lines\n`);
        const summary = summarizer.result();
        const skippedLines = warnings.filter((w) => w.code === 'skipped_line').map((w) => w.line);
        if (opts.json === true)
          io.stdout(
            `${safeJson({ file, warnings, ...(opts.salvage === true ? { skippedLines } : {}), ...summary, spend: spendOf(spent) })}\n`,
          );
        else {
          io.stdout(`${formatSummary(summary, { file: file === '-' ? '(standard input)' : file })}\n`);
          // A run whose records carry no usage and that kept no ledger says nothing of money: none is no $0.
          if (spent.usage !== null || spent.spend.ledger)
            io.stdout(`Money: ${escapeControl(formatSpend(spent.spend))}\n`);
          if (skippedLines.length > 0) io.stdout(`Skipped corrupt lines (--salvage): ${skippedLines.join(', ')}\n`);
        }
        if (opts.exitCode === true && (lines === 0 || summary.status !== 'ok')) exit(EXIT.problems);
      },
    );
}

/** The run's money for --json (null when nothing is known of it): billed + uncertain (`costUsd`), its uncertain part with why, what was released, its calls of unknown cost with why. */
function spendOf(
  facts: RunFactsCollector,
): Pick<RunSpend, 'costUsd' | 'uncertainUsd' | 'releasedUsd' | 'uncertain' | 'unpricedCalls' | 'unpriced'> | null {
  // Records without usage and no ledger: nothing is known of money, which is not $0.
  if (facts.usage === null && !facts.spend.ledger) return null;
  const { costUsd, uncertainUsd, releasedUsd, uncertain, unpricedCalls, unpriced } = facts.spend;
  return { costUsd, uncertainUsd, releasedUsd, uncertain, unpricedCalls, unpriced };
}

/** Whether `target` is a folder (not there, or a file: no). */
function isFolder(target: string): boolean {
  try {
    return fs.statSync(target).isDirectory();
  } catch {
    return false;
  }
}
