import type { HistoryEntry } from './HistoryEntry';
import { RunFileFactsCollector, type RunFileFacts } from './RunFileFactsCollector';

/** What a run diff says of each run as a whole, besides where they differ. */
export interface RunSideFacts {
  /** The file, or the run as its store names it. */
  readonly name: string;
  /** The library version that wrote it (its meta line), when it says. */
  readonly version: string | undefined;
  /** How it went and what it spent: outcome, reason, usage, the money apart, wall time. */
  readonly facts: RunFileFacts;
  /** Milliseconds spent in each state (the moves out of it), in the order the states were first left. */
  readonly timePerState: Readonly<Record<string, number>>;
}

/**
 * One side of a run diff, built a line at a time: the run's facts and its time per state.
 * Holds nothing of the file but those (a state's total per state the table has). Pure.
 */
export class RunDiffSide {
  readonly #facts = new RunFileFactsCollector();
  readonly #time = new Map<string, number>();
  #version: string | undefined;

  constructor(readonly name: string) {}

  add(entry: HistoryEntry): void {
    this.#facts.add(entry);
    if (entry.kind === 'meta') this.#version = entry.meta.version;
    else if (entry.kind === 'record') {
      const { from, durationMs } = entry.record;
      this.#time.set(from, (this.#time.get(from) ?? 0) + durationMs);
    }
  }

  result(): RunSideFacts {
    return {
      name: this.name,
      version: this.#version,
      facts: this.#facts.result(),
      timePerState: Object.fromEntries(this.#time),
    };
  }
}
