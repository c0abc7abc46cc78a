import { readHistoryInto, type ReadHistoryOptions } from './loadHistory';
import type { RunUsage } from './runFacts';
import { RunFileFactsCollector } from './RunFileFactsCollector';

/** What one run's history file says of how the run went, as a batch's readers list it. */
export interface RunFileFacts {
  /**
   * The run's outcome by `RunFacts`: its last finished turn's (`end_of_turn`, `error`, …), or
   * `incomplete` (the file ends inside a turn), `empty` (no moves), `ok` (no turn ended).
   */
  readonly outcome: string;
  /** Its last turn reached a terminal state: the run ended. */
  readonly ended: boolean;
  /** Why it failed (the failing move, `failureReason`), when its last finished turn ended in an error state. */
  readonly reason: string | undefined;
  /** Its usage as its records tell it; null when none carries usage. */
  readonly usage: RunUsage | null;
  /** What it spent, by the ledger's rule (`RunSpend.costUsd`). */
  readonly costUsd: number;
  /** Moves (records) in the file. */
  readonly transitions: number;
  /** From the file's start (its meta line, else its first move's start) to its last move; 0 without moves. */
  readonly durationMs: number;
  /** The state its last move entered, and that move's seq; undefined without moves. */
  readonly lastState: string | undefined;
  readonly lastSeq: number | undefined;
}

/**
 * Reads one run's history file, streamed (nothing of it is held but these facts), and says how
 * the run went. Throws what `readHistoryInto` throws for a file that cannot be read.
 */
export async function readRunFile(file: string, options: ReadHistoryOptions): Promise<RunFileFacts> {
  const facts = new RunFileFactsCollector();
  await readHistoryInto(file, options, (entry) => facts.add(entry));
  return facts.result();
}
