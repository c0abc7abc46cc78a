import type { Command } from 'commander';
import { DEFAULT_MAX_LINE_BYTES } from '../history/maxLineBytes';
import { positiveInteger } from './cliArguments';

/** The options every reading command takes. */
export interface ReadingOptions {
  salvage?: boolean;
  maxLineBytes?: number;
}

/** Adds `--salvage` and `--max-line-bytes` to a command that reads a history. */
export function addReadingOptions(command: Command): void {
  command
    .option(
      '--salvage',
      'skip corrupt lines (glued by a full disk, NUL bytes from a power cut, over --max-line-bytes), listing each, and read the rest',
    )
    .option(
      '--max-line-bytes <n>',
      `the longest line read, in bytes (default ${DEFAULT_MAX_LINE_BYTES.toLocaleString('en-US')}, the limit the writer keeps to)`,
      positiveInteger,
    );
}

/** The reading options as `loadHistory` and `buildHtmlReport` take them. */
export function loadOptions(opts: ReadingOptions): { salvage: boolean; maxLineBytes?: number } {
  return {
    salvage: opts.salvage === true,
    ...(opts.maxLineBytes === undefined ? {} : { maxLineBytes: opts.maxLineBytes }),
  };
}

/** The reading options with `--store URL`. */
export type StoreReading = ReadingOptions & { store?: string };
