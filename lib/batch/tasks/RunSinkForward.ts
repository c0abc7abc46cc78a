import type { JournalLineRead } from '../../history/HistoryEntry';
import { RunFileFactsCollector } from '../../history/RunFileFactsCollector';
import type { IllegalTransitionError } from '../../machine/IllegalTransitionError';
import type { HistorySink, JournalLine, ResetInfo } from '../../machine/HistorySink';
import type { TransitionRecord } from '../../machine/TransitionRecord';
import type { TransitionTable } from '../../machine/TransitionTable';
import { openRunSink } from '../keeping/openRunSink';
import type { RunSink } from '../keeping/RunStore';
import type { RunTaskOptions } from './RunTaskOptions';

/**
 * The sink a run's machine is made with, before the run's own sink can be opened (only a run
 * that really starts gets a file; until then its machine makes no move): it passes each line
 * on once `openFile` or `openStore` is called. Given `onFileFacts` at `openFile`, it also learns
 * what the file will say of the run (`RunFileFacts`) from the lines it passes on, so that a
 * batch need not read the file back when the run ends.
 */
export class RunSinkForward implements HistorySink<string> {
  #sink: RunSink | undefined;
  /** With `onFileFacts`: the facts learned of `file`, and who is told them once it closed cleanly. */
  #facts:
    { collector: RunFileFactsCollector; file: string; tell: NonNullable<RunTaskOptions['onFileFacts']> } | undefined;

  /**
   * Opens the run's history file (`historyFile`) for a machine on `table`, and passes the lines
   * on to it from now on. With `onFileFacts`, also learns what the file will say of the run.
   */
  openFile(
    table: TransitionTable<string>,
    historyFile: string,
    options: Pick<RunTaskOptions, 'historyOptions' | 'onFileFacts'>,
  ): RunSink {
    const file = openRunSink(historyFile, options.historyOptions, table);
    this.#sink = file;
    const { onFileFacts } = options;
    if (onFileFacts !== undefined) {
      const collector = new RunFileFactsCollector(table);
      if (file.startedAt !== undefined) collector.started(file.startedAt);
      this.#facts = { collector, file: historyFile, tell: onFileFacts };
    }
    return file;
  }

  /** Opens the run's sink in a store (`openSink`) for a machine on `table`, and passes the lines on to it from now on. */
  async openStore(table: TransitionTable<string>, openSink: NonNullable<RunTaskOptions['openSink']>): Promise<RunSink> {
    const sink = await openSink(table);
    this.#sink = sink;
    return sink;
  }

  /**
   * Tells `onFileFacts` (given at `openFile`) what the run's file says, learned as it was
   * written. For once the sink closed with no history error: a file that missed a line says less.
   */
  tellFacts(): void {
    const facts = this.#facts;
    if (facts !== undefined) facts.tell(facts.file, facts.collector.result());
  }

  // The facts are taken unchecked (RunFileFactsCollector.record): what is passed on is what the
  // machine and the adapter made, and the sink writes it as it is (a line it cannot write as it
  // is throws, and the run's history error keeps the facts from being told).

  write(record: TransitionRecord<string>): void {
    this.#sink?.write(record);
    this.#facts?.collector.record(record);
  }

  rejected(error: IllegalTransitionError<string>): void {
    this.#sink?.rejected?.(error);
  }

  reset(info: ResetInfo<string>): void {
    this.#sink?.reset?.(info);
    this.#facts?.collector.reset();
  }

  journal(entry: JournalLine): void | PromiseLike<void> {
    const kept = this.#sink?.journal?.(entry);
    this.#facts?.collector.journal(entry as JournalLineRead);
    return kept;
  }
}
