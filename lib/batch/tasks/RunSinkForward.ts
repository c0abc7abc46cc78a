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
 * on once `openFile` or `openStore` is called. Given `onRunFacts`, it also learns what the run's
 * lines will say of it (`RunFileFacts`) from the lines it passes on, so that a batch need not
 * read them back when the run ends.
 */
export class RunSinkForward implements HistorySink<string> {
  #sink: RunSink | undefined;
  /** With `onRunFacts`: the facts learned of the run (of `file`, in a folder), and who is told them once it closed cleanly. */
  #facts:
    | { collector: RunFileFactsCollector; file: string | undefined; tell: NonNullable<RunTaskOptions['onRunFacts']> }
    | undefined;

  /**
   * Opens the run's history file (`historyFile`) for a machine on `table`, and passes the lines
   * on to it from now on. With `onRunFacts`, also learns what the file will say of the run.
   */
  openFile(
    table: TransitionTable<string>,
    historyFile: string,
    options: Pick<RunTaskOptions, 'historyOptions' | 'onRunFacts'>,
  ): RunSink {
    const file = openRunSink(historyFile, options.historyOptions, table);
    return this.#opened(file, table, historyFile, options, file.startedAt);
  }

  /**
   * Opens the run's sink in a store (`openSink`) for a machine on `table`, and passes the lines
   * on to it from now on. With `onRunFacts`, also learns what its lines will say of the run.
   */
  async openStore(
    table: TransitionTable<string>,
    openSink: NonNullable<RunTaskOptions['openSink']>,
    options: Pick<RunTaskOptions, 'onRunFacts'>,
  ): Promise<RunSink> {
    return this.#opened(await openSink(table), table, undefined, options);
  }

  #opened(
    sink: RunSink,
    table: TransitionTable<string>,
    file: string | undefined,
    { onRunFacts }: Pick<RunTaskOptions, 'onRunFacts'>,
    startedAt?: number,
  ): RunSink {
    this.#sink = sink;
    if (onRunFacts !== undefined) {
      const collector = new RunFileFactsCollector(table);
      if (startedAt !== undefined) collector.started(startedAt);
      this.#facts = { collector, file, tell: onRunFacts };
    }
    return sink;
  }

  /**
   * Tells `onRunFacts` what the run's lines say, learned as they were written. For once the
   * sink closed with no history error: lines that missed one say less.
   */
  tellFacts(): void {
    const facts = this.#facts;
    if (facts !== undefined) facts.tell(facts.collector.result(), facts.file);
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
