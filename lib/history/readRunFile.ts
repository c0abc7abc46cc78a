import { readHistoryInto, type ReadHistoryOptions } from './loadHistory';
import { RunFileFactsCollector, type RunFileFacts } from './RunFileFactsCollector';

export type { RunFileFacts } from './RunFileFactsCollector';

/**
 * Reads one run's history file, streamed (nothing of it is held but these facts), and says how
 * the run went. Throws what `readHistoryInto` throws for a file that cannot be read.
 */
export async function readRunFile(file: string, options: ReadHistoryOptions): Promise<RunFileFacts> {
  const facts = new RunFileFactsCollector();
  await readHistoryInto(file, options, (entry) => facts.add(entry));
  return facts.result();
}
