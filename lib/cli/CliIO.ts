/** Where the CLI writes; tests pass their own to capture it. */
export interface CliIO {
  stdout(text: string): void;
  stderr(text: string): void;
  /** What the file name `-` reads. Default: the process's standard input. */
  stdin?: AsyncIterable<Uint8Array>;
  /**
   * Ends the commands that follow a file until told (`inspect --follow`, `watch`): the
   * executable aborts it on Ctrl-C. Without one they follow until the input ends.
   */
  signal?: AbortSignal;
  /**
   * A promise while standard output is backed up (a slow pipe), else undefined: readers wait
   * for it between chunks, so output never piles up in memory. Default: never backed up.
   */
  drain?: () => Promise<void> | undefined;
  /** Standard output is a terminal (`watch` redraws in place), and its size. */
  isTTY?: boolean;
  columns?: number;
  rows?: number;
}
