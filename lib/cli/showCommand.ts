import type { Command } from 'commander';
import { ConversationFormatter } from '../history/formatConversation';
import { runSource, STORE_FLAG, STORE_HELP } from './storeCommands';
import { positiveInteger } from './cliArguments';
import type { ReadingOptions } from './readingOptions';
import type { CommandContext } from './CommandContext';

/** `agent-sm show <path> [runId]`: what was said in a run written with `journal: true`. */
export function addShowCommand(program: Command, ctx: CommandContext): void {
  const { io, opened, read } = ctx;
  program
    .command('show')
    .description(
      'Print what was said in a run written with journal: true: the user messages, the model texts, the tool calls with their inputs, the tool results, the errors.',
    )
    .argument(
      '<path>',
      "history file (.jsonl) written with journal: true; - reads standard input; or a batch's history folder, with a run id",
    )
    .argument('[runId]', 'the run of the folder to show')
    .option(STORE_FLAG, STORE_HELP)
    .option('--turn <n>', 'only this turn', positiveInteger)
    .option(
      '--seq <n>',
      'only what move n followed from (the LLM attempts and tool calls just before it)',
      positiveInteger,
    )
    .option('--full', 'show long content whole instead of folded')
    .action(
      async (
        target: string,
        runId: string | undefined,
        opts: ReadingOptions & { store?: string; turn?: number; seq?: number; full?: boolean },
      ) => {
        const { file, input } = await runSource(target, runId, opts.store, 'show', { opened });
        const conversation = new ConversationFormatter({
          ...(opts.turn === undefined ? {} : { turn: opts.turn }),
          ...(opts.seq === undefined ? {} : { seq: opts.seq }),
          ...(opts.full === true ? { foldChars: Infinity, foldLines: Infinity } : {}),
        });
        const print = (lines: string[]): void => {
          if (lines.length > 0) io.stdout(`${lines.join('\n')}\n`);
        };
        // Printed as it is read, nothing kept: a file of any size shows in flat memory. The
        // moves' data is never looked at, so it is not parsed.
        await read(file, { ...opts, withData: false, ...(input === undefined ? {} : { input }) }, (entry) =>
          print(conversation.add(entry)),
        );
        print(conversation.end());
      },
    );
}
