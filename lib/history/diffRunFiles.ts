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
  /**
   * When the runs first differ in the details of the same move (a message's length, a
   * result's count) and a journal line of that move says why (the request sent, the response,
   * the tool's result): that line of each run, and its fields that differ. `kind` is then its kind.
   */
  readonly cause?: { readonly a: StepView; readonly b: StepView; readonly fields: readonly FieldDifference[] };
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
  /**
   * Stop reading at the divergence: for a reader that wants only where the runs differ (the
   * batch diff, per task). The sides' facts then cover the lines read so far, no more.
   */
  untilDivergence?: boolean;
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
  const { context = 5, after = 200, untilDivergence = false, ...read } = options;
  const sideA = new RunDiffSide(a.name);
  const sideB = new RunDiffSide(b.name);
  const cursorA = new EntryCursor(a, read);
  const cursorB = new EntryCursor(b, read);
  try {
    // The steps alike just before the divergence, as read (made views of only at the end).
    const before: DiffStep[] = [];
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
        before.push(stepA);
      }
    }
    if (stepA === undefined && stepB === undefined)
      return {
        same: true,
        divergence: undefined,
        before: before.map(stepView),
        afterA: [],
        afterB: [],
        sameSteps,
        ...sides(sideA, sideB),
      };
    let kind = divergenceKind(stepA, stepB);
    let cause: RunDivergence['cause'];
    let aheadA: DiffStep[] = [];
    let aheadB: DiffStep[] = [];
    if (stepA !== undefined && stepB !== undefined && sameMove(stepA, stepB)) {
      // The same move, told otherwise: the journal lines of the move may say why.
      aheadA = await lookAhead(cursorA, sideA);
      aheadB = await lookAhead(cursorB, sideB);
      for (let i = 0; i < Math.min(aheadA.length, aheadB.length); i++) {
        const x = aheadA[i]!;
        const y = aheadB[i]!;
        if (x.kind === 'move' || y.kind === 'move') break;
        if (sameStep(x, y)) continue;
        kind = divergenceKind(x, y);
        cause = { a: stepView(x), b: stepView(y), fields: differingFields(x.value, y.value) };
        break;
      }
    }
    const divergence: RunDivergence = {
      kind,
      a: stepA && stepView(stepA),
      b: stepB && stepView(stepB),
      fields: stepA === undefined || stepB === undefined ? [] : differingFields(stepA.value, stepB.value),
      ...(cause === undefined ? {} : { cause }),
    };
    const afterA = untilDivergence ? [] : await rest([stepA, ...aheadA], cursorA, sideA, after);
    const afterB = untilDivergence ? [] : await rest([stepB, ...aheadB], cursorB, sideB, after);
    return {
      same: false,
      divergence,
      before: before.map(stepView),
      afterA,
      afterB,
      sameSteps,
      ...sides(sideA, sideB),
    };
  } finally {
    await Promise.all([cursorA.close(), cursorB.close()]);
  }
}

/** Two moves between the same states (their details aside). */
function sameMove(a: DiffStep, b: DiffStep): boolean {
  return (
    a.kind === 'move' && b.kind === 'move' && a.value['from'] === b.value['from'] && a.value['to'] === b.value['to']
  );
}

/** The steps after a move up to the next move (included), at most ten: the journal lines of the move. */
async function lookAhead(cursor: EntryCursor, side: RunDiffSide): Promise<DiffStep[]> {
  const steps: DiffStep[] = [];
  while (steps.length < 10) {
    const step = await nextStep(cursor, side);
    if (step === undefined) break;
    steps.push(step);
    if (step.kind === 'move') break;
  }
  return steps;
}

/** Reads the rest of a run for its facts, keeping its first `keep` steps (`read` first, the steps already read) as views. */
async function rest(
  read: ReadonlyArray<DiffStep | undefined>,
  cursor: EntryCursor,
  side: RunDiffSide,
  keep: number,
): Promise<StepView[]> {
  const views: StepView[] = [];
  if (read[0] === undefined) return views;
  for (const step of read) if (step !== undefined && views.length < keep) views.push(stepView(step));
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
