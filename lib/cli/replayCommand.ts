import type { Command } from 'commander';
import type { JournalLineRead } from '../history/HistoryEntry';
import { safeJson } from './safeJson';
import { formatReplay } from '../replay/formatReplay';
import { replayFile } from '../replay/replayFile';
import { formatStallScan } from '../replay/formatStallScan';
import { parseStallSpecs } from '../replay/parseStallSpecs';
import { scanStalls } from '../replay/scanStalls';
import { inputOf, runSource, STORE_FLAG, STORE_HELP } from './storeCommands';
import { budgetLimit } from './cliArguments';
import { loadOptions, type StoreReading } from './readingOptions';
import type { CommandContext } from './CommandContext';
import { EXIT } from './EXIT';
import { UsageError } from './UsageError';

/** `agent-sm replay <path> [runId]`: re-drives a run from its journal, or scans it for stalls (`--stall`). */
export function addReplayCommand(program: Command, ctx: CommandContext): void {
  const { io, opened, warn, read, exit } = ctx;
  program
    .command('replay')
    .description(
      'Re-drive a run from its journal (written with journal: true), with no network and no tools, and check that it makes the recorded moves; with --budget, show where other limits would have stopped it.',
    )
    .argument('<path>', "history file (.jsonl) written with journal: true, or a batch's history folder, with a run id")
    .argument('[runId]', 'the run of the folder (with --store: of the batch) to replay')
    .option(STORE_FLAG, STORE_HELP)
    .option(
      '--budget <limit=value...>',
      'replay under these limits, e.g. maxCostUsd=0.10 maxLlmCalls=5',
      budgetLimit,
      {} as Record<string, number>,
    )
    .option('--stall <detector...>', 'show where stall detectors would have fired: k=3, text, idle=8')
    .option('--json', 'print the replay report as JSON')
    .action(async (target: string, runId: string | undefined, opts: ReplayOptions) => {
      // Checked before the file is read, so a bad spec is named first.
      const specs = opts.stall === undefined ? undefined : parseStallSpecs(opts.stall);
      if (specs !== undefined && Object.keys(opts.budget).length > 0)
        throw new UsageError('--stall scans the journal and --budget re-drives the run: give one of them');
      const { file, input } = await runSource(target, runId, opts.store, 'replay', { opened });
      if (specs !== undefined) {
        // The detectors judge the whole journal up to each response, so the journal is kept; the moves are not.
        const journal: JournalLineRead[] = [];
        await read(file, { ...opts, withData: false, ...inputOf(input) }, (e) => {
          if (e.kind === 'journal') journal.push(e.journal);
        });
        const scan = scanStalls(journal, specs);
        io.stdout(opts.json === true ? `${safeJson({ file, ...scan })}\n` : `${formatStallScan(scan, file)}\n`);
        return;
      }
      const budget = Object.keys(opts.budget).length === 0 ? undefined : opts.budget;
      // Read as the replay goes: the peak memory does not grow with the file.
      const report = await replayFile(
        file,
        { ...loadOptions(opts), onWarning: warn, ...inputOf(input) },
        budget === undefined ? {} : { budget },
      );
      io.stdout(opts.json === true ? `${safeJson({ file, ...report })}\n` : `${formatReplay(report, file)}\n`);
      if (budget === undefined && !report.reproduced) exit(EXIT.problems);
    });
}

/** `replay`'s options. */
type ReplayOptions = StoreReading & { budget: Record<string, number>; json?: boolean; stall?: string[] };
