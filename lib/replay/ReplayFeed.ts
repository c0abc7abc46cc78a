import { FifoQueue } from '../internal/FifoQueue';
import { isHookLine } from '../internal/isHookLine';
import type { HistoryEntry, JournalLineRead } from '../history/HistoryEntry';
import type { TransitionRecord } from '../machine/TransitionRecord';

/**
 * A recorded run as a replay takes it: the journal's LLM lines, tool lines and turn inputs as
 * queues taken from the front, and each move handed to `onRecord` as it is read. A feed over a
 * file reads it only as far as the replay has got (`readUntil`), so a file of any length is
 * replayed in flat memory; a feed over arrays has everything from the start.
 */
export class ReplayFeed {
  /** LLM lines not yet answered, in file order. */
  readonly llm = new FifoQueue<JournalLineRead>();
  /** Tool lines (of tools that ran) not yet answered. */
  readonly tools = new FifoQueue<JournalLineRead>();
  /** The user message of each recorded turn (the first attempt of a `sendUserMessage`) not yet taken. */
  readonly inputs = new FifoQueue<string>();
  /** LLM lines read so far, answered or not. */
  llmLines = 0;
  /** The journal lines read before the first LLM line: what a journal without one is named by. */
  readonly beforeFirstLLM: JournalLineRead[] = [];
  /** When the first move was made (epoch ms), once it is read. */
  firstAt: number | undefined;
  #source: AsyncIterator<readonly HistoryEntry[]> | undefined;
  #failed: { error: unknown } | undefined;
  /** Journal lines are no longer wanted: the replay stopped, and the rest is read only to count the moves. */
  #journalWanted = true;
  readonly #onRecord: (record: TransitionRecord<string>) => void;

  private constructor(onRecord: (record: TransitionRecord<string>) => void) {
    this.#onRecord = onRecord;
  }

  /** A feed over a history read whole: everything is there at once. */
  static ofArrays(
    history: { records: readonly TransitionRecord<string>[]; journal: readonly JournalLineRead[] },
    onRecord: (record: TransitionRecord<string>) => void,
  ): ReplayFeed {
    const feed = new ReplayFeed(onRecord);
    for (const record of history.records) feed.#record(record);
    for (const line of history.journal) feed.#journal(line);
    return feed;
  }

  /** A feed over a file's entries, chunk by chunk (`readHistoryChunks`), read as the replay asks. */
  static ofChunks(
    chunks: AsyncIterable<readonly HistoryEntry[]>,
    onRecord: (record: TransitionRecord<string>) => void,
  ): ReplayFeed {
    const feed = new ReplayFeed(onRecord);
    feed.#source = chunks[Symbol.asyncIterator]();
    return feed;
  }

  /**
   * Reads on until `enough()` holds or the source has ended; resolves to `enough()`. A read
   * that failed (a corrupt line) is thrown again by every later call: the replay may have
   * caught it as an LLM call's error, and the file must not then look as if it had ended.
   */
  async readUntil(enough: () => boolean): Promise<boolean> {
    while (!enough()) {
      if (this.#failed !== undefined) throw this.#failed.error;
      if (this.#source === undefined) return false;
      let next: IteratorResult<readonly HistoryEntry[]>;
      try {
        next = await this.#source.next();
      } catch (error) {
        this.#failed = { error };
        this.#source = undefined;
        throw error;
      }
      if (next.done === true) {
        this.#source = undefined;
        return enough();
      }
      for (const entry of next.value) {
        if (entry.kind === 'record') this.#record(entry.record);
        else if (entry.kind === 'journal' && this.#journalWanted) this.#journal(entry.journal);
      }
    }
    return true;
  }

  /** The next turn's input, reading as far as it takes; undefined when the journal has no more. */
  async nextInput(): Promise<string | undefined> {
    await this.readUntil(() => this.inputs.length > 0);
    return this.inputs.shift();
  }

  /** Reads the rest of the source, keeping no journal line: every move still reaches `onRecord`. */
  async drain(): Promise<void> {
    this.#journalWanted = false;
    this.llm.clear();
    this.tools.clear();
    this.inputs.clear();
    await this.readUntil(() => false);
  }

  /** Stops reading (closes the file) when the replay ends early, by an error. */
  async close(): Promise<void> {
    const source = this.#source;
    this.#source = undefined;
    await source?.return?.();
  }

  #record(record: TransitionRecord<string>): void {
    this.firstAt ??= record.at;
    this.#onRecord(record);
  }

  #journal(line: JournalLineRead): void {
    // A hook's call (ledger-only) is not one of the loop's: the replay neither serves nor counts it.
    if (line.type === 'llm' && !isHookLine(line)) {
      this.llmLines += 1;
      this.llm.push(line);
      if (line.operation === 'sendUserMessage' && line.attempt === 1)
        this.inputs.push(String((line.input as { message?: unknown } | undefined)?.message ?? ''));
    } else if (line.type === 'tool' && line.status !== 'not_run') this.tools.push(line);
    if (this.llmLines === 0) this.beforeFirstLLM.push(line);
  }
}
