import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Command } from 'commander';
import { escapeControl } from '../internal/escapeControl';
import { reportPage } from './reportPage';
import { messageOf } from '../internal/messageOf';
import { STORE_FLAG, storeHelp } from './storeCommands';
import type { StoreReading } from './readingOptions';
import type { CommandContext } from './CommandContext';
import { UsageError } from './UsageError';

/** `agent-sm report <path> [runId]`: one self-contained HTML page for a run or a batch. */
export function addReportCommand(program: Command, ctx: CommandContext): void {
  const { io, opened } = ctx;
  program
    .command('report')
    .description(
      "Write one self-contained HTML page (no network, opens from file://): for a history file, the run — its failure, timeline, time per state, cost, every move; for a folder, the batch — spend against the caps, outcomes, a sortable table of runs, each run's timeline.",
    )
    .argument('<path>', "a history file (.jsonl), or a folder of them (a batch's historyDir)")
    .argument('[runId]', 'a run of the folder (with --store: of the batch): its page alone')
    .option(STORE_FLAG, storeHelp('a batch id, whose page is made unless a run is named'))
    .option(
      '-o, --output <file>',
      'where to write the page (default: <file>.html next to the history file, <folder>/report.html for a folder, <batchId>.html or <runId>.html for a store)',
    )
    .action(async (path_: string, runId: string | undefined, opts: StoreReading & { output?: string }) => {
      const page = await reportPage(path_, runId, opts, { opened });
      const { report, file: target } = page;
      for (const w of report.warnings) io.stderr(`agent-sm: warning: ${escapeControl(w)}\n`);
      const output = opts.output ?? page.output;
      if (target !== undefined && path.resolve(output) === path.resolve(target))
        throw new UsageError(`-o ${output} is the history file itself; choose another path for the page`);
      try {
        fs.writeFileSync(output, report.html);
      } catch (error) {
        throw new Error(`cannot write the report to ${output}: ${messageOf(error)}`, { cause: error });
      }
      io.stdout(`${output}\n`);
    });
}
