/**
 * Bytes handed over as they come, read by one reader as an async iterable: a run's lines, as
 * they are committed, streamed into the reader of its facts, so that the run's end needs no
 * read of its lines back from the server and no copy of them is kept.
 */
export class LineFeed implements AsyncIterable<Uint8Array> {
  #chunks: Buffer[] = [];
  #ended = false;
  /** The reader stopped (done or failed): what is pushed after is dropped. */
  #closed = false;
  #wake: (() => void) | undefined;
  #waking = false;

  /** Hands over `lines`, each followed by a newline. */
  push(lines: readonly string[]): void {
    if (this.#ended || this.#closed) return;
    this.#chunks.push(Buffer.from(`${lines.join('\n')}\n`, 'utf8'));
    this.#wakeReader();
  }

  /** No more lines: the reader ends once it has read those pushed. */
  end(): void {
    this.#ended = true;
    this.#wakeReader();
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<Uint8Array> {
    try {
      for (;;) {
        const chunks = this.#chunks;
        this.#chunks = [];
        yield* chunks;
        if (this.#chunks.length > 0) continue;
        if (this.#ended) return;
        await new Promise<void>((resolve) => (this.#wake = resolve));
      }
    } finally {
      this.#closed = true;
      this.#chunks = [];
    }
  }

  /**
   * Wakes the reader once the writer's next step has gone out: reading a commit's lines while
   * the server works on the next one keeps the reading off the run's path.
   */
  #wakeReader(): void {
    if (this.#wake === undefined || this.#waking) return;
    this.#waking = true;
    setImmediate(() => {
      this.#waking = false;
      const wake = this.#wake;
      this.#wake = undefined;
      wake?.();
    });
  }
}
