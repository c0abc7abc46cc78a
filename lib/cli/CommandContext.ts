import type { RunStore } from '../batch/keeping/RunStore';
import type { HistoryEntry, HistoryWarning } from '../history/HistoryEntry';
import { readHistoryInto, type ReadHistoryOptions } from '../history/loadHistory';
import { escapeControl } from '../internal/escapeControl';
import type { CliIO } from './CliIO';
import type { ReadingOptions } from './readingOptions';

/** How a command reads a history: its reading options, and where the lines come from. */
export type ReadOptions = ReadingOptions & {
  onWarning?: (w: HistoryWarning) => void;
  withData?: boolean;
  input?: AsyncIterable<Uint8Array>;
};

/** What every reading command of `main` shares: its output, the stores to close, how to read and warn. */
export interface CommandContext {
  io: CliIO;
  /** Stores opened by a command, closed once it has run (their connections would keep the process alive). */
  opened: RunStore[];
  /** Takes the exit code. */
  exit(code: number): void;
  /** A warning as one line on stderr. */
  warn(w: HistoryWarning): void;
  /** Reads `file` (`-`: standard input) into `take`, entry by entry; returns how many lines it had. */
  read(file: string, options: ReadOptions, take: (entry: HistoryEntry) => void): Promise<number>;
  /** A file's name as printed. */
  shown(file: string): string;
}

/** The context of the commands of one `main` call. */
export function commandContext(io: CliIO, opened: RunStore[], exit: (code: number) => void): CommandContext {
  const warn = (w: HistoryWarning): void => io.stderr(`agent-sm: warning: ${escapeControl(w.message)}\n`);
  const read = async (file: string, options: ReadOptions, take: (entry: HistoryEntry) => void): Promise<number> => {
    const readOptions: ReadHistoryOptions = {
      salvage: options.salvage === true,
      onWarning: options.onWarning ?? warn,
      ...(options.maxLineBytes === undefined ? {} : { maxLineBytes: options.maxLineBytes }),
    };
    if (io.drain !== undefined) readOptions.pace = io.drain;
    if (options.input !== undefined) readOptions.input = options.input;
    else if (file === '-') readOptions.input = io.stdin ?? process.stdin;
    return readHistoryInto(file === '-' ? '(standard input)' : file, readOptions, take, {
      withData: options.withData !== false,
    });
  };
  const shown = (file: string): string => escapeControl(file === '-' ? '(standard input)' : file);
  return { io, opened, exit, warn, read, shown };
}
