import { failureReason } from './failureReason';
import { readHistoryInto, type ReadHistoryOptions } from './loadHistory';
import { RunFactsCollector, type RunUsage } from './runFacts';

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
  const facts = new RunFactsCollector({ retain: false });
  let transitions = 0;
  let startedAt: number | undefined;
  let lastAt: number | undefined;
  let lastState: string | undefined;
  let lastSeq: number | undefined;
  await readHistoryInto(file, options, (entry) => {
    facts.add(entry);
    if (entry.kind === 'meta') startedAt ??= entry.meta.startedAt;
    if (entry.kind !== 'record') return;
    const r = entry.record;
    transitions += 1;
    startedAt ??= r.at - r.durationMs;
    lastAt = r.at;
    lastState = r.to;
    lastSeq = r.seq;
  });
  const result = facts.result();
  const last = result.turns.at(-1);
  const failing = result.failingMove;
  return {
    outcome: result.outcome,
    ended: last !== undefined && last.end === 'terminal',
    reason: failing === null ? undefined : failureReason(failing.description, failing.data),
    usage: result.finalUsage,
    costUsd: result.spend.costUsd,
    transitions,
    durationMs: startedAt === undefined || lastAt === undefined ? 0 : Math.max(0, lastAt - startedAt),
    lastState,
    lastSeq,
  };
}
