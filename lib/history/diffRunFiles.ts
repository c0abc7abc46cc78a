import type { HistoryEntry } from './HistoryEntry';
import {
  differingFields,
  divergenceKind,
  sameStep,
  stepOf,
  stepView,
  type DiffStep,
  type DivergenceKind,
  type FieldDifference,
  type StepView,
} from './diffStep';
import { readHistoryChunks, type ReadHistoryOptions } from './loadHistory';
import { RunDiffSide, type RunSideFacts } from './RunDiffSide';

/** A run to compare: a history file (`name` is its path), or a store's run (`input` gives its lines). */
export interface RunDiffInput {
  readonly name: string;
  readonly input?: () => AsyncIterable<Uint8Array>;
}

/** Where two runs first differ. */
export interface RunDivergence {
  readonly kind: DivergenceKind;
  /** The step of run A there (its line, seq and what it says); undefined when A ended before. */
  readonly a: StepView | undefined;
  readonly b: StepView | undefined;
  /** The fields the two steps hold differently (none when one run ended), at most eight. */
  readonly fields: readonly FieldDifference[];
}

/** What `diffRunFiles` finds. */
export interface RunDiff {
  /** The runs did the same, timestamps, durations and run ids aside. */
  readonly same: boolean;
  readonly divergence: RunDivergence | undefined;
  /** The steps both runs took alike just before the divergence (A's lines), at most `context`. */
  readonly before: readonly StepView[];
  /** Each run's steps from the divergence on (the diverging one first), at most `after` each. */
  readonly afterA: readonly StepView[];
  readonly afterB: readonly StepView[];
  /** Steps compared alike before the divergence (or in all, when the same). */
  readonly sameSteps: number;
  readonly a: RunSideFacts;
  readonly b: RunSideFacts;
}

/** How `diffRunFiles` reads and how much of the runs it keeps. */
export interface RunDiffOptions extends Pick<ReadHistoryOptions, 'salvage' | 'maxLineBytes' | 'onWarning'> {
  /** Steps kept before the divergence. Default 5. */
  context?: number;
  /** Steps of each run kept from the divergence on. Default 200. */
  after?: number;
}

/** The entries of a run, read a chunk at a time, taken one by one. */
class EntryCursor {
  readonly #chunks: AsyncGenerator<HistoryEntry[], void, undefined>;
  #chunk: HistoryEntry[] = [];
  #i = 0;
  constructor(run: RunDiffInput, options: ReadHistoryOptions) {
    this.#chunks = readHistoryChunks(run.name, run.input === undefined ? options : { ...options, input: run.input() });
  }
  /** The next entry, or undefined at the end of the file. */
  async next(): Promise<HistoryEntry | undefined> {
    while (this.#i >= this.#chunk.length) {
      const step = await this.#chunks.next();
      if (step.done === true) return undefined;
      this.#chunk = step.value;
      this.#i = 0;
    }
    return this.#chunk[this.#i++];
  }
  async close(): Promise<void> {
    await this.#chunks.return(undefined);
  }
}

/** The next step of a run, every entry on the way given to its side's facts. */
async function nextStep(cursor: EntryCursor, side: RunDiffSide): Promise<DiffStep | undefined> {
  for (;;) {
    const entry = await cursor.next();
    if (entry === undefined) return undefined;
    side.add(entry);
    const step = stepOf(entry);
    if (step !== undefined) return step;
  }
}

/**
 * Compares two runs' histories, both streamed in step, a line of each at a time, until they
 * first differ (timestamps, durations and run ids aside; see `IGNORED_FIELDS`): what kind of
 * difference it is, the fields that differ, a few steps of context before it and each run's
 * steps from it on (bounded by `after`). The rest of each file is read for its facts alone:
 * outcome, calls, tokens, money, wall time, time per state. Memory stays bounded whatever the
 * files' length. Throws what `readHistoryChunks` throws for a file that cannot be read (it names the file).
 */
export async function diffRunFiles(a: RunDiffInput, b: RunDiffInput, options: RunDiffOptions = {}): Promise<RunDiff> {
  const { context = 5, after = 200, ...read } = options;
  const sideA = new RunDiffSide(a.name);
  const sideB = new RunDiffSide(b.name);
  const cursorA = new EntryCursor(a, read);
  const cursorB = new EntryCursor(b, read);
  try {
    const before: StepView[] = [];
    let sameSteps = 0;
    let stepA: DiffStep | undefined;
    let stepB: DiffStep | undefined;
    for (;;) {
      stepA = await nextStep(cursorA, sideA);
      stepB = await nextStep(cursorB, sideB);
      if (stepA === undefined || stepB === undefined || !sameStep(stepA, stepB)) break;
      sameSteps++;
      if (context > 0) {
        if (before.length >= context) before.shift();
        before.push(stepView(stepA));
      }
    }
    if (stepA === undefined && stepB === undefined)
      return { same: true, divergence: undefined, before, afterA: [], afterB: [], sameSteps, ...sides(sideA, sideB) };
    const divergence: RunDivergence = {
      kind: divergenceKind(stepA, stepB),
      a: stepA && stepView(stepA),
      b: stepB && stepView(stepB),
      fields: stepA === undefined || stepB === undefined ? [] : differingFields(stepA.value, stepB.value),
    };
    const afterA = await rest(stepA, cursorA, sideA, after);
    const afterB = await rest(stepB, cursorB, sideB, after);
    return { same: false, divergence, before, afterA, afterB, sameSteps, ...sides(sideA, sideB) };
  } finally {
    await Promise.all([cursorA.close(), cursorB.close()]);
  }
}

/** Reads the rest of a run for its facts, keeping its first `keep` steps (from `first`) as views. */
async function rest(
  first: DiffStep | undefined,
  cursor: EntryCursor,
  side: RunDiffSide,
  keep: number,
): Promise<StepView[]> {
  const views: StepView[] = [];
  if (first === undefined) return views;
  if (keep > 0) views.push(stepView(first));
  for (;;) {
    const entry = await cursor.next();
    if (entry === undefined) return views;
    side.add(entry);
    if (views.length >= keep) continue;
    const step = stepOf(entry);
    if (step !== undefined) views.push(stepView(step));
  }
}

function sides(a: RunDiffSide, b: RunDiffSide): { a: RunSideFacts; b: RunSideFacts } {
  return { a: a.result(), b: b.result() };
}
