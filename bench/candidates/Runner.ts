// What every per-move candidate exposes to bench/transition.bench.ts. Each candidate file is
// bundled on its own, with its dependencies inlined (bench/candidates/build.ts), and each row
// of a table loads its own copy of its bundle: no two rows share compiled code or JIT
// feedback (eventemitter3's emit, the library's move), as they would if loaded as modules.

/** Which clock a candidate reads: the wall clock, or a counter that costs next to nothing. */
export type ClockKind = 'date' | 'counter';

/** A candidate ready to run: `cycle()` does the 13 moves once; the rest lets us check it did. */
export interface Runner {
  cycle(): void;
  listenerCalls(): number;
  state(): string;
}

export type CandidateFactory = (clock: ClockKind, variant?: string) => Runner;

/** `Date.now`, or a counter: one integer add per call, so the clock no longer hides the rest. */
export function makeClock(kind: ClockKind): () => number {
  if (kind === 'date') return Date.now;
  let t = 1_700_000_000_000;
  return () => ++t;
}
