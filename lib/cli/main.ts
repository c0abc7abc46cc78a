import { Command, CommanderError } from 'commander';
import type { RunStore } from '../batch/keeping/RunStore';
import { HistoryFileError } from '../history/HistoryFileError';
import { escapeControl } from '../internal/escapeControl';
import { messageOf } from '../internal/messageOf';
import { oneLine } from '../internal/text';
import { VERSION } from '../internal/version';
import type { CliIO } from './CliIO';
import { commandContext } from './CommandContext';
import { EXIT } from './EXIT';
import { addApprovalsCommands } from './approvalsCommand';
import { addDiagramCommand } from './diagramCommand';
import { addDiffCommand } from './diffCommand';
import { addExportCommand } from './exportCommand';
import { addInspectCommand } from './inspectCommand';
import { addRaiseCommand } from './raiseCommand';
import { addReadingOptions } from './readingOptions';
import { addReplayCommand } from './replayCommand';
import { addReportCommand } from './reportCommand';
import { safeJson } from './safeJson';
import { addShowCommand } from './showCommand';
import { addStoreCommands } from './storeCommands';
import { addValidateCommand } from './validateCommand';
import { addWatchCommand } from './watchCommand';

export type { CliIO } from './CliIO';
export { EXIT } from './EXIT';

const processIO: CliIO = {
  stdout: (text) => void process.stdout.write(text),
  stderr: (text) => void process.stderr.write(text),
};

/**
 * The `agent-sm` command line, as a function: parses `argv` (without `node` and the script),
 * runs the command and returns the exit code, never throwing and never exiting the process.
 * Every error is one line on stderr, `agent-sm: error: …`, with no stack trace.
 */
export async function main(argv: readonly string[], io: CliIO = processIO): Promise<number> {
  let code: number = EXIT.ok;
  const opened: RunStore[] = [];
  const ctx = commandContext(io, opened, (exit) => (code = exit));
  const program = new Command('agent-sm')
    .description(
      'Inspect the JSON Lines history of an agent-state-machine run: what happened, where and why it failed, where the time went.',
    )
    .version(VERSION, '-V, --version')
    .exitOverride()
    .configureOutput({
      writeOut: (text) => io.stdout(text),
      writeErr: (text) => io.stderr(text),
      outputError: (text, write) => write(`agent-sm: ${oneLine(text)}\n`),
    });

  // In this order in the help.
  addInspectCommand(program, ctx);
  addValidateCommand(program, ctx);
  addDiagramCommand(program, ctx);
  addReportCommand(program, ctx);
  addExportCommand(program, ctx);
  addWatchCommand(program, { ...io, opened }, ctx.exit);
  addShowCommand(program, ctx);
  addReplayCommand(program, ctx);
  addDiffCommand(program, ctx);
  // Every command that reads a history file takes the same two reading options.
  for (const command of program.commands) addReadingOptions(command);
  addStoreCommands(program, { stdout: io.stdout, opened, json: safeJson });
  // It reads no history file: added after them.
  addRaiseCommand(program, { stdout: io.stdout, opened });
  addApprovalsCommands(program, { stdout: io.stdout, json: safeJson, opened });
  // Bad usage (an unknown command or option, a missing argument, a value refused) says where the usage is.
  for (const command of [program, ...program.commands]) {
    const help = command === program ? 'agent-sm --help' : `agent-sm ${command.name()} --help`;
    command.configureOutput({ outputError: (text, write) => write(`agent-sm: ${oneLine(text)}; see ${help}\n`) });
  }
  let ran: string | undefined;
  program.hook('preAction', (_program, action) => void (ran = action.name()));

  try {
    await program.parseAsync([...argv], { from: 'user' });
    return code;
  } catch (error) {
    if (error instanceof CommanderError) return error.exitCode === 0 ? EXIT.ok : EXIT.error;
    io.stderr(`agent-sm: error: ${escapeControl(oneLine(messageOf(error)))}${whatToDo(error, ran)}\n`);
    return EXIT.error;
  } finally {
    // A store's connections would keep the process alive.
    await Promise.all(opened.map((store) => store.close().catch(() => undefined)));
  }
}

/**
 * What to do about an error that does not say it: a path that is not there (a typo, a folder
 * not written yet) names the command's help, which says what it reads.
 */
function whatToDo(error: unknown, command: string | undefined): string {
  if (!(error instanceof HistoryFileError) || error.code !== 'not_found' || command === undefined) return '';
  if (!error.reason.startsWith('no such file')) return '';
  return `; check the path (agent-sm ${command} --help says what it reads)`;
}
