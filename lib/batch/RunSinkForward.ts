import type { JournalLineRead } from '../history/HistoryEntry';
import type { RunFileFacts } from '../history/readRunFile';
import { RunFileFactsCollector } from '../history/RunFileFactsCollector';
import type { IllegalTransitionError } from '../machine/IllegalTransitionError';
import type { HistorySink, JournalLine, ResetInfo } from '../machine/HistorySink';
import type { TransitionRecord } from '../machine/TransitionRecord';
import type { TransitionTable } from '../machine/TransitionTable';
import { openRunSink } from './openRunSink';
import type { RunSink } from './RunStore';
import type { RunTaskOptions } from './RunTaskOptions';

/**
 * The sink a run's machine is made with, before the run's own sink can be opened (only a run
 * that really starts gets a file; until then its machine makes no move): it passes each line
 * on once `open` is called. Given `facts` at `open`, it also learns what the file will say of
 * the run (`RunFileFacts`) from the lines it passes on, so that a batch need not read the
 * file back when the run ends.
 */
export class RunSinkForward implements HistorySink<string> {
  #sink: RunSink | undefined;
  #facts: RunFileFactsCollector | undefined;
  /** Lines passed on, the meta line counted: the line numbers a reader of the file would give. */
  #line = 1;

  /**
   * Opens the run's sink as a task's options say (its history file, else its store's) for a
   * machine on `table`, and passes the lines on to it from now on. With `onFileFacts` and a
   * file, also learns what the file will say of the run. A file opens at once; a store's sink is awaited.
   */
  open(
    table: TransitionTable<string>,
    options: Pick<RunTaskOptions, 'historyFile' | 'historyOptions' | 'openSink' | 'onFileFacts'>,
  ): RunSink | Promise<RunSink> {
    const { historyFile, openSink } = options;
    if (historyFile === undefined) return openSink!(table).then((sink) => (this.#sink = sink));
    const file = openRunSink(historyFile, options.historyOptions, table);
    this.#sink = file;
    if (options.onFileFacts !== undefined) {
      this.#facts = new RunFileFactsCollector(table);
      if (file.startedAt !== undefined) this.#facts.started(file.startedAt);
    }
    return file;
  }

  /** What the file says of the run, learned as it was written; undefined unless asked at `open`. */
  get facts(): RunFileFacts | undefined {
    return this.#facts?.result();
  }

  write(record: TransitionRecord<string>): void {
    this.#sink?.write(record);
    this.#line += 1;
    this.#facts?.add(record);
  }

  rejected(error: IllegalTransitionError<string>): void {
    this.#sink?.rejected?.(error);
    this.#line += 1;
  }

  reset(info: ResetInfo<string>): void {
    this.#sink?.reset?.(info);
    this.#line += 1;
    this.#facts?.add({ kind: 'reset', line: this.#line, reset: { type: 'reset', ...info } });
  }

  journal(entry: JournalLine): void | PromiseLike<void> {
    const kept = this.#sink?.journal?.(entry);
    this.#line += 1;
    this.#facts?.add({ kind: 'journal', line: this.#line, journal: entry as JournalLineRead });
    return kept;
  }
}
