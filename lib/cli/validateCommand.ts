import type { Command } from 'commander';
import type { HistoryWarning } from '../history/HistoryEntry';
import { safeJson } from './safeJson';
import { HistoryValidator } from '../history/validateHistory';
import { formatValidation } from './formatValidation';
import { inputOf, runSource, STORE_FLAG, STORE_HELP } from './storeCommands';
import type { StoreReading } from './readingOptions';
import type { CommandContext } from './CommandContext';
import { EXIT } from './EXIT';

/** `agent-sm validate <file> [runId]`: replays a run against its table and lists every problem. */
export function addValidateCommand(program: Command, ctx: CommandContext): void {
  const { io, opened, warn, read, shown, exit } = ctx;
  program
    .command('validate')
    .description(
      'Replay a run against its table (from the file, else the sixteen-state one) and list every problem. Exit 0 when clean, 1 otherwise.',
    )
    .argument(
      '<file>',
      "history file (.jsonl) written by JsonlHistorySink; - reads standard input; or a batch's folder, with a run id",
    )
    .argument('[runId]', 'a run of the folder (with --store: of the batch)')
    .option(STORE_FLAG, STORE_HELP)
    .option('--json', 'print the verdict as JSON')
    .action(async (target: string, runId: string | undefined, opts: StoreReading & { json?: boolean }) => {
      const { file, input } = await runSource(target, runId, opts.store, 'validate', { opened });
      const validator = new HistoryValidator();
      const skippedLines: number[] = [];
      const onWarning = (w: HistoryWarning): void => {
        if (w.code === 'skipped_line') skippedLines.push(w.line);
        warn(w);
      };
      // Replaying a run never looks at a record's data.
      const lines = await read(file, { ...opts, onWarning, withData: false, ...inputOf(input) }, (entry) =>
        validator.add(entry),
      );
      const result = validator.result();
      const name = shown(file);
      // A salvaged file is never clean: lines were lost.
      const ok = result.ok && lines > 0 && skippedLines.length === 0;
      if (opts.json === true)
        io.stdout(
          `${safeJson({ file, ...result, ok, ...(lines === 0 ? { empty: true } : {}), ...(opts.salvage === true ? { skippedLines } : {}) })}\n`,
        );
      else if (lines === 0) io.stdout(`${name}: the file is empty: no history lines to check\n`);
      else io.stdout(formatValidation(name, result, skippedLines));
      exit(ok ? EXIT.ok : EXIT.problems);
    });
}
