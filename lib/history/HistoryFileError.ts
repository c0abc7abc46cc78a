import { StateMachineError } from '../machine/StateMachineError';
import { escapeControl } from '../internal/escapeControl';

/** What went wrong with a history file; stable, for programs to switch on. */
export type HistoryFileErrorCode =
  /** The file to read does not exist. */
  | 'not_found'
  /** The file exists but could not be read (a directory, no permission, an I/O error). */
  | 'read_failed'
  /** A line that is not a history line, and not the cut last line of a crashed run. */
  | 'corrupt_line'
  /** A line longer than the reader's `maxLineBytes`; it was not read into memory. */
  | 'line_too_long'
  /** The sink was asked to create a file that already exists (pass `overwrite: true`). */
  | 'file_exists'
  /** The sink could not open its file. */
  | 'open_failed'
  /** Writing a line failed (disk full, file closed under it): that line is not in the file. */
  | 'write_failed'
  /** The sink was written to after `close()`. */
  | 'sink_closed'
  /** A record's `data` could not be turned into JSON; the record was written with a placeholder. */
  | 'unserializable_data'
  /** The sink's meta line names one table and the machine it was given to enforces another. */
  | 'table_mismatch';

/**
 * A history file could not be read or written. The message names the file and, for a bad
 * line, its number and the start of its text, as `file:line`, so an editor can jump there.
 */
export class HistoryFileError extends StateMachineError {
  readonly code: HistoryFileErrorCode;
  /** The file's path, as given. */
  readonly file: string;
  /** The 1-based line number, for `corrupt_line`. */
  readonly line: number | undefined;
  /** What was wrong, without the file and line. */
  readonly reason: string;

  constructor(
    code: HistoryFileErrorCode,
    file: string,
    reason: string,
    options: { line?: number; snippet?: string; cause?: unknown } = {},
  ) {
    const where = options.line === undefined ? file : `${file}:${options.line}`;
    const snippet = options.snippet === undefined ? '' : ` — ${quoteSnippet(options.snippet)}`;
    // Paths and snippets come from outside: escaped, so the message stays one inert line.
    super(
      escapeControl(`${where}: ${reason}${snippet}`),
      options.cause === undefined ? undefined : { cause: options.cause },
    );
    this.code = code;
    this.file = file;
    this.line = options.line;
    this.reason = reason;
  }
}

/** The start of a bad line, on one line, so the message shows what was there. */
function quoteSnippet(text: string): string {
  const flat = text.replace(/\s+/g, ' ');
  return JSON.stringify(flat.length > 60 ? `${flat.slice(0, 57)}...` : flat);
}
