import { mergeUncertain, type UncertainReasons } from '../../internal/formatSpend';
import type { BatchFolder, FolderRun } from './readBatchFolder';

/** What a batch reader learned of a run besides its `FolderRun`: usage, wall time, and a digest of its steps. */
export interface RunDiffFacts {
  readonly llmCalls: number;
  readonly toolCalls: number;
  readonly inputTokens: number;
  readonly outputTokens: number;
  readonly durationMs: number;
  /** `RunDigest` of its live file: runs with the same digest took the same steps. */
  readonly digest: string;
}

/** One task of one batch, as the diff shows it. */
export interface TaskSide {
  readonly outcome: string;
  readonly reason: string | undefined;
  readonly costUsd: number;
  readonly uncertainUsd: number;
  readonly releasedUsd: number;
  /** LLM calls of unknown cost: in none of the dollars. */
  readonly unpricedCalls: number;
  readonly llmCalls: number;
  readonly toolCalls: number;
  readonly inputTokens: number;
  readonly outputTokens: number;
  readonly durationMs: number;
  /** Undefined for a run with no file (skipped, pending) or one that could not be read. */
  readonly digest: string | undefined;
}

/** A task both batches ran, A's side and B's. */
export interface TaskPair {
  readonly id: string;
  readonly a: TaskSide;
  readonly b: TaskSide;
  /** B's charge minus A's (billed plus uncertain), USD. */
  readonly costDeltaUsd: number;
  readonly llmCallsDelta: number;
  readonly tokensDelta: number;
  /** The two runs took different steps (their digests differ, or one has none). */
  readonly stepsDiffer: boolean;
}

/** A batch's totals as the diff compares them. */
export interface BatchDiffTotals {
  readonly runs: number;
  /** Runs that ended well (`end_of_turn`, `wrapped_up`). */
  readonly succeeded: number;
  readonly costUsd: number;
  readonly uncertainUsd: number;
  readonly releasedUsd: number;
  readonly uncertain: UncertainReasons;
  /** LLM calls of unknown cost over every run, and why. */
  readonly unpricedCalls: number;
  readonly unpriced: UncertainReasons;
  readonly llmCalls: number;
  readonly toolCalls: number;
  readonly inputTokens: number;
  readonly outputTokens: number;
  /** The runs' wall times added up. */
  readonly durationMs: number;
}

/** What `diffBatches` finds. */
export interface BatchDiff {
  readonly a: { readonly where: string; readonly totals: BatchDiffTotals };
  readonly b: { readonly where: string; readonly totals: BatchDiffTotals };
  /** Tasks that ended well in A and not in B, in A's order. */
  readonly regressions: readonly TaskPair[];
  /** Tasks that did not end well in A and did in B. */
  readonly improvements: readonly TaskPair[];
  /** The other tasks that differ (outcome, money — calls of unknown cost too — calls, tokens or steps), the largest cost change first, then calls. */
  readonly changed: readonly TaskPair[];
  /** Tasks of one batch alone. */
  readonly onlyA: ReadonlyArray<{ readonly id: string } & TaskSide>;
  readonly onlyB: ReadonlyArray<{ readonly id: string } & TaskSide>;
  /** Tasks both ran that did the same. */
  readonly unchanged: number;
  /** Nothing differs: no regression, improvement, change or one-sided task. */
  readonly same: boolean;
}

const ENDED_WELL: ReadonlySet<string> = new Set(['end_of_turn', 'wrapped_up']);

/** Whether a run's outcome is a success. */
export function endedWell(outcome: string): boolean {
  return ENDED_WELL.has(outcome);
}

const round = (usd: number): number => Math.round(usd * 1e10) / 1e10;

/**
 * Compares two batches task by task (matched by id): regressions (ended well in A, not in B,
 * both reasons kept), improvements, the other tasks that changed (largest cost change first),
 * tasks of one side alone, and each batch's totals. Timing is reported, never compared. Pure.
 */
export function diffBatches(
  a: BatchFolder,
  aFacts: ReadonlyMap<string, RunDiffFacts>,
  b: BatchFolder,
  bFacts: ReadonlyMap<string, RunDiffFacts>,
): BatchDiff {
  const sidesA = sideMap(a, aFacts);
  const sidesB = sideMap(b, bFacts);
  const regressions: TaskPair[] = [];
  const improvements: TaskPair[] = [];
  const changed: TaskPair[] = [];
  const onlyA: Array<{ id: string } & TaskSide> = [];
  let unchanged = 0;
  for (const [id, sa] of sidesA) {
    const sb = sidesB.get(id);
    if (sb === undefined) {
      onlyA.push({ id, ...sa });
      continue;
    }
    const pair: TaskPair = {
      id,
      a: sa,
      b: sb,
      costDeltaUsd: round(sb.costUsd - sa.costUsd),
      llmCallsDelta: sb.llmCalls - sa.llmCalls,
      tokensDelta: sb.inputTokens + sb.outputTokens - (sa.inputTokens + sa.outputTokens),
      stepsDiffer: sa.digest !== sb.digest,
    };
    if (endedWell(sa.outcome) && !endedWell(sb.outcome)) regressions.push(pair);
    else if (!endedWell(sa.outcome) && endedWell(sb.outcome)) improvements.push(pair);
    else if (differs(pair)) changed.push(pair);
    else unchanged++;
  }
  const onlyB = [...sidesB].filter(([id]) => !sidesA.has(id)).map(([id, side]) => ({ id, ...side }));
  changed.sort(
    (x, y) =>
      Math.abs(y.costDeltaUsd) - Math.abs(x.costDeltaUsd) ||
      Math.abs(y.llmCallsDelta) - Math.abs(x.llmCallsDelta) ||
      Math.abs(y.tokensDelta) - Math.abs(x.tokensDelta),
  );
  const same = regressions.length + improvements.length + changed.length + onlyA.length + onlyB.length === 0;
  return {
    a: { where: a.dir, totals: totalsOf(a, sidesA) },
    b: { where: b.dir, totals: totalsOf(b, sidesB) },
    regressions,
    improvements,
    changed,
    onlyA,
    onlyB,
    unchanged,
    same,
  };
}

/** Whether a pair of the same success differs in anything but time. */
function differs(p: TaskPair): boolean {
  const { a, b } = p;
  return (
    a.outcome !== b.outcome ||
    a.reason !== b.reason ||
    p.costDeltaUsd !== 0 ||
    round(a.uncertainUsd - b.uncertainUsd) !== 0 ||
    round(a.releasedUsd - b.releasedUsd) !== 0 ||
    a.unpricedCalls !== b.unpricedCalls ||
    a.llmCalls !== b.llmCalls ||
    a.toolCalls !== b.toolCalls ||
    p.tokensDelta !== 0 ||
    a.inputTokens !== b.inputTokens ||
    p.stepsDiffer
  );
}

/** A batch's runs by id, in its order. */
function sideMap(folder: BatchFolder, facts: ReadonlyMap<string, RunDiffFacts>): Map<string, TaskSide> {
  const out = new Map<string, TaskSide>();
  for (const run of folder.runs) out.set(run.id, sideOf(run, facts.get(run.id)));
  return out;
}

function sideOf(run: FolderRun, facts: RunDiffFacts | undefined): TaskSide {
  // A run not read (unreadable, or never started) has no counts to compare: zero calls made.
  const f = facts ?? NOT_READ;
  return {
    outcome: run.outcome,
    reason: run.reason,
    costUsd: run.costUsd,
    uncertainUsd: run.uncertainUsd,
    releasedUsd: run.releasedUsd,
    unpricedCalls: run.unpricedCalls,
    llmCalls: f.llmCalls,
    toolCalls: f.toolCalls,
    inputTokens: f.inputTokens,
    outputTokens: f.outputTokens,
    durationMs: f.durationMs,
    digest: run.outcome === 'unreadable' ? undefined : facts?.digest,
  };
}

const NOT_READ = { llmCalls: 0, toolCalls: 0, inputTokens: 0, outputTokens: 0, durationMs: 0 } as const;

function totalsOf(folder: BatchFolder, sides: ReadonlyMap<string, TaskSide>): BatchDiffTotals {
  let succeeded = 0;
  let llmCalls = 0;
  let toolCalls = 0;
  let inputTokens = 0;
  let outputTokens = 0;
  let durationMs = 0;
  for (const side of sides.values()) {
    if (endedWell(side.outcome)) succeeded++;
    llmCalls += side.llmCalls;
    toolCalls += side.toolCalls;
    inputTokens += side.inputTokens;
    outputTokens += side.outputTokens;
    durationMs += side.durationMs;
  }
  const { costUsd, uncertainUsd, releasedUsd, unpricedCalls } = folder.totals;
  return {
    runs: folder.totals.runs,
    succeeded,
    costUsd,
    uncertainUsd,
    releasedUsd,
    uncertain: mergeUncertain([folder.totals.uncertain]),
    unpricedCalls,
    unpriced: mergeUncertain([folder.totals.unpriced]),
    llmCalls,
    toolCalls,
    inputTokens,
    outputTokens,
    durationMs,
  };
}
