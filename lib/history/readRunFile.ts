import type { HistoryEntry } from './HistoryEntry';
import { readHistoryInto, type ReadHistoryOptions } from './loadHistory';
import { RunFileFactsCollector, type RunFileFacts } from './RunFileFactsCollector';

export type { RunFileFacts } from './RunFileFactsCollector';

/**
 * Reads one run's history file, streamed (nothing of it is held but these facts), and says how
 * the run went. `also` sees each entry read, for a reader that needs more of the file in the
 * same pass. Throws what `readHistoryInto` throws for a file that cannot be read.
 */
export async function readRunFile(
  file: string,
  options: ReadHistoryOptions,
  also?: (entry: HistoryEntry) => void,
): Promise<RunFileFacts> {
  const facts = new RunFileFactsCollector();
  await readHistoryInto(
    file,
    options,
    also === undefined
      ? (entry) => facts.add(entry)
      : (entry) => {
          facts.add(entry);
          also(entry);
        },
  );
  return facts.result();
}
