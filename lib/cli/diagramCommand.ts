import type { Command } from 'commander';
import { loadHistory } from '../history/loadHistory';
import { historyToGantt, RunDiagram, toMermaid } from '../history/toMermaid';
import { loadOptions, type ReadingOptions } from './readingOptions';
import type { CommandContext } from './CommandContext';
import { UsageError } from './UsageError';

/** `agent-sm diagram`: the transition table as Mermaid, or a run over it (`--history`), or its timeline (`--gantt`). */
export function addDiagramCommand(program: Command, ctx: CommandContext): void {
  const { io, warn, read } = ctx;
  program
    .command('diagram')
    .description(
      'Print a Mermaid diagram: the transition table, a run over it with edge counts (--history), or a run as a timeline (--history --gantt).',
    )
    .option('--history <file>', 'draw this run: the edges it took and how often')
    .option('--gantt', 'draw the run as a gantt timeline, one lane per state (needs --history)')
    .action(async (opts: ReadingOptions & { history?: string; gantt?: boolean }) => {
      if (opts.history === undefined) {
        if (opts.gantt === true) throw new UsageError('--gantt needs --history <file>: a timeline is drawn from a run');
        io.stdout(`${toMermaid()}\n`);
        return;
      }
      if (opts.gantt === true) {
        // A timeline has one line per move, so it is built from the whole file.
        const loaded = await loadHistory(opts.history, loadOptions(opts));
        for (const w of loaded.warnings) warn(w);
        io.stdout(`${historyToGantt(loaded.entries)}\n`);
        return;
      }
      // Edge counts only: the file is streamed, never held.
      const diagram = new RunDiagram();
      await read(opts.history, opts, (entry) => diagram.add(entry));
      io.stdout(`${diagram.result()}\n`);
    });
}
