/**
 * A stream of byte pieces that a reader awaits and a watcher pushes to: one run's lines as
 * `watch` finds them (a file's new bytes, a store's new lines), read by one history reader.
 */
export class Pieces implements AsyncIterable<Uint8Array> {
  #queue: Buffer[] = [];
  #ended = false;
  /** The reader waits for more (it took every piece), or is gone. */
  #idle = false;
  /** Its reader stopped: what is pushed is let go of. */
  #gone = false;
  #wake: (() => void) | undefined;
  #whenIdle: Array<() => void> = [];

  push(piece: Buffer): void {
    if (this.#gone) return;
    this.#queue.push(piece);
    this.#idle = false;
    this.#wake?.();
  }

  end(): void {
    this.#ended = true;
    this.#wake?.();
  }

  /** Ends it and lets go of what was not taken: its reader has stopped. */
  drop(): void {
    this.#queue = [];
    this.#gone = true;
    this.end();
    this.#settle();
  }

  /**
   * Resolves once the reader has taken every piece pushed so far and waits for more (or has
   * stopped): a reader that handles a piece before asking for the next (a history reader)
   * has then read every line pushed, so what the board draws next is up to date.
   */
  taken(): Promise<void> {
    if (this.#idle) return Promise.resolve();
    return new Promise<void>((resolve) => this.#whenIdle.push(resolve));
  }

  async *[Symbol.asyncIterator](): AsyncIterator<Uint8Array> {
    try {
      for (;;) {
        const piece = this.#queue.shift();
        if (piece !== undefined) {
          yield piece;
          continue;
        }
        if (this.#ended) return;
        this.#settle();
        await new Promise<void>((resolve) => (this.#wake = resolve));
        this.#wake = undefined;
      }
    } finally {
      this.#gone = true;
      this.#settle();
    }
  }

  #settle(): void {
    this.#idle = true;
    const waiting = this.#whenIdle;
    this.#whenIdle = [];
    for (const resolve of waiting) resolve();
  }
}
