import type { UncertainReasons } from '../../internal/formatSpend';
import type { BatchManifest } from '../keeping/batchManifest';
import { folderBatchSource, type BatchSource } from './BatchSource';
import { addUsageTo, emptyUsage, type UsageTotals } from '../../agent/UsageTotals';
import { LIMIT_ROWS, limitUsed } from '../../internal/fieldLists';
import { LIMITS } from '../../internal/limits';
import type { HistoryEntry, HistoryWarning } from '../../history/HistoryEntry';
import { HistoryFileError } from '../../history/HistoryFileError';
import { readRunFile, type RunFileFacts } from '../../history/readRunFile';
import { attemptSpends } from '../../history/attemptSpends';
import { NO_MONEY, spendOfRun } from '../../history/spendOfRun';
import { sumRunMoney } from '../../history/sumRunMoney';
import { messageOf } from '../../internal/messageOf';
import type { RaiseRequest } from '../keeping/raiseRequests';
import type { CapPause } from '../keeping/capPause';

/**
 * How a run of a batch folder stands. Beside the turn outcomes: `cut_off` (its file ends inside
 * a turn and the batch is over), `running` (the same while the batch still runs), `skipped`
 * (a task of the manifest with no file), `unreadable` (its file could not be read).
 */
export type FolderRunOutcome = string;

/** One run of a batch folder. */
export interface FolderRun {
  readonly id: string;
  readonly outcome: FolderRunOutcome;
  /** Why it did not end well, when the folder says. */
  readonly reason: string | undefined;
  /**
   * USD spent, by the ledger's rule, over every attempt of the run: the cut-off attempts a
   * resume kept beside its file included (`spendOverAttempts`), each call counted once.
   */
  readonly costUsd: number;
  /** Of `costUsd`, what may have been billed but reported no usage, at its worst case. */
  readonly uncertainUsd: number;
  /** Holds let go, provably not billed. */
  readonly releasedUsd: number;
  /** Why money is uncertain, most calls first, over all its attempts (each call once). */
  readonly uncertain: UncertainReasons;
  /** LLM calls of unknown cost (no price, no hold): in none of the dollars, never taken for $0. And why. */
  readonly unpricedCalls: number;
  readonly unpriced: UncertainReasons;
  /**
   * Its history file; undefined for a skipped task. A run whose resume stopped before its next
   * attempt wrote a file: its newest attempt set aside (`<file>.interrupted…`), read as the run.
   */
  readonly file: string | undefined;
  /** Earlier attempts of it that a resume set aside (`<file>.interrupted`, `<file>.interrupted.2`, …), `file` not among them. */
  readonly interrupted: readonly string[];
}

/** What a batch's history folder says of the batch. */
export interface BatchFolder {
  /** The folder, or the batch as its store names it (`readBatchSource`). */
  readonly dir: string;
  /** The batch's manifest, when the folder has one. */
  readonly manifest: BatchManifest | undefined;
  /** A batch still holds the folder's lock: it is running. */
  readonly running: boolean;
  /** Every run, failures first (error, budget_exceeded, cancelled, unreadable, cut off, running, pending (the batch still runs), skipped, then ended well). */
  readonly runs: readonly FolderRun[];
  /** Runs by outcome, and what they spent in all. */
  readonly totals: {
    readonly runs: number;
    readonly outcomes: Readonly<Record<string, number>>;
    /** USD charged: billed plus uncertain. */
    readonly costUsd: number;
    /** Of `costUsd`, USD charged at a worst case: it may have been billed, no usage came back. */
    readonly uncertainUsd: number;
    /** USD held and let go, provably not billed. */
    readonly releasedUsd: number;
    /** Why money is uncertain, over every run, most calls first. */
    readonly uncertain: UncertainReasons;
    /** LLM calls of unknown cost over every run, and why, most calls first. */
    readonly unpricedCalls: number;
    readonly unpriced: UncertainReasons;
  };
  /** Why it stopped before running every task, as far as its files tell; undefined when it did not (or still runs). */
  readonly stopped: string | undefined;
  /** It was resumed: some run's earlier attempt is kept beside its file. */
  readonly resumed: boolean;
  /** The raises of its paused cap asked (`agent-sm raise`: its folder's raise file, or its store), in order. */
  readonly raises: readonly RaiseRequest[];
  /** The running batch waits at its dollar cap for a raise (`agent-sm raise`): when, and at what cap; undefined when not. */
  readonly paused: CapPause | undefined;
  /** What `agent-sm raise` takes to name the batch: its folder, or `--store URL <batchId>`. */
  readonly raiseArgs: readonly string[];
}

/** Failures first, the worst first; outcomes not listed (a custom table's) just before the runs that ended well. */
const ORDER = [
  'error',
  'budget_exceeded',
  'stalled',
  'cancelled',
  'unreadable',
  'cut_off',
  'running',
  'pending',
  'skipped',
];
const rank = (outcome: string): number => {
  const i = ORDER.indexOf(outcome);
  return i !== -1 ? i : outcome === 'end_of_turn' || outcome === 'wrapped_up' ? ORDER.length + 1 : ORDER.length;
};

/**
 * Reads a batch's history folder — its manifest, each run file streamed one at a time (a
 * folder of 10,000 runs holds one run's facts at a time, never a file), the earlier attempts a
 * resume set aside — and says how each run went and how the batch did. Files that are not the
 * manifest's are listed too. Throws `HistoryFileError` for a folder with neither manifest nor
 * run files; a run file that cannot be read is listed as `unreadable` with why.
 */
export async function readBatchFolder(dir: string, options: BatchReadingOptions): Promise<BatchFolder> {
  const source = await folderBatchSource(dir);
  if (source === undefined)
    throw new HistoryFileError('not_found', dir, 'holds no batch: no batch.json and no history files (*.jsonl)');
  return readBatchSource(source, options);
}

/** How `readBatchFolder` and `readBatchSource` read the runs. */
export interface BatchReadingOptions {
  salvage?: boolean;
  maxLineBytes?: number;
  onWarning: (w: HistoryWarning) => void;
  /**
   * Sees each run's live file as it is read, for a reader that needs more of it in the same
   * pass (`agent-sm diff` digests each run): `entry` each line, `done` its facts once read.
   */
  observe?: (id: string) => { entry(entry: HistoryEntry): void; done(facts: RunFileFacts): void };
}

/** `readBatchFolder` for a batch from a folder or a store (`storeBatchSource`): `dir` is its `where`. */
export async function readBatchSource(source: BatchSource, options: BatchReadingOptions): Promise<BatchFolder> {
  const { manifest, running, raises, paused } = source;
  const runs: FolderRun[] = [];
  // What the runs used, summed, for the batch's caps; the cost by the ledger's rule.
  const used = emptyUsage();
  for (const task of source.runs) {
    const { lines } = task;
    const interrupted = task.interrupted.map((attempt) => attempt.name);
    if (lines === undefined) {
      // Not started: while the batch runs it may yet start (pending); once it has ended, it was skipped.
      const outcome = running ? 'pending' : 'skipped';
      runs.push({ id: task.id, outcome, reason: undefined, ...NO_MONEY, file: undefined, interrupted });
      continue;
    }
    const file = lines.name;
    try {
      const observer = options.observe?.(task.id);
      const facts = await readRunFile(
        file,
        {
          salvage: options.salvage === true,
          ...(options.maxLineBytes === undefined ? {} : { maxLineBytes: options.maxLineBytes }),
          onWarning: options.onWarning,
          ...(lines.input === undefined ? {} : { input: lines.input() }),
        },
        observer === undefined ? undefined : (entry) => observer.entry(entry),
      );
      observer?.done(facts);
      const money = spendOfRun(facts, facts.attempt, await attemptSpends(task.interrupted, options));
      // Its newest attempt set aside, with no attempt after it: cut off, whatever that attempt said.
      const aside = task.lastAttemptAside === true;
      const cut = !facts.ended || aside;
      const outcome = cut ? (running ? 'running' : 'cut_off') : facts.outcome;
      const where = aside ? 'its attempt set aside (no attempt after it wrote a file)' : 'its file';
      const reason = cut
        ? facts.lastState === undefined
          ? `${where} holds no moves`
          : `${where} ends inside a turn, in ${facts.lastState} (seq ${facts.lastSeq})`
        : facts.reason;
      runs.push({ id: task.id, outcome, reason, ...money, file, interrupted });
      if (facts.usage !== null) {
        const { llmCalls, toolCalls, inputTokens, outputTokens } = facts.usage;
        addUsageTo(used, { llmCalls, toolCalls, inputTokens, outputTokens });
      }
    } catch (error) {
      runs.push({ id: task.id, outcome: 'unreadable', reason: messageOf(error), ...NO_MONEY, file, interrupted });
    }
  }
  // Stable: runs of one outcome keep the manifest's order.
  const sorted = runs
    .map((run, i) => ({ run, i }))
    .sort((a, b) => rank(a.run.outcome) - rank(b.run.outcome) || a.i - b.i);
  const outcomes: Record<string, number> = {};
  for (const run of runs) outcomes[run.outcome] = (outcomes[run.outcome] ?? 0) + 1;
  // The sum `watch` says too (`WatchState.spend`): the two agree on a folder read at one moment.
  const money = sumRunMoney(runs);
  addUsageTo(used, { costUsd: money.costUsd, uncertainUsd: money.uncertainUsd, releasedUsd: money.releasedUsd });
  return {
    dir: source.where,
    manifest,
    running,
    runs: sorted.map((s) => s.run),
    totals: {
      runs: runs.length,
      outcomes,
      ...money,
    },
    stopped: running ? undefined : stopReason(runs, spentCap(manifest, used, raises)),
    resumed: runs.some((r) => r.interrupted.length > 0),
    raises,
    raiseArgs: source.raiseArgs,
    paused,
  };
}

/**
 * The batch's caps (its manifest's `limits.total`, the dollar cap as its raise file last raised
 * it, wall time aside) its runs' usage reached, in words; undefined for none.
 */
function spentCap(
  manifest: BatchManifest | undefined,
  used: UsageTotals,
  raises: readonly RaiseRequest[],
): string | undefined {
  const last = raises.at(-1);
  const total = { ...manifest?.limits.total, ...(last === undefined ? {} : { maxCostUsd: last.maxCostUsd }) };
  const reached: string[] = [];
  for (const limit of LIMIT_ROWS) {
    const cap = total[limit];
    if (limit === 'maxWallMs' || typeof cap !== 'number') continue;
    const n = limitUsed(used, limit);
    const { cell, label } = LIMITS[limit];
    if (n >= cap) reached.push(`${label} ${cell(n)} of ${cell(cap)} (${limit})`);
  }
  return reached.length === 0 ? undefined : reached.join(', ');
}

/**
 * Why a batch that is over did not run every task, from what its manifest and runs say: the
 * folder keeps no record of it, so this names what they show, and says when they show nothing.
 */
function stopReason(runs: readonly FolderRun[], cap: string | undefined): string | undefined {
  const skipped = runs.filter((r) => r.outcome === 'skipped').length;
  const cut = runs.filter((r) => r.outcome === 'cut_off').length;
  const parts: string[] = [];
  if (skipped > 0) {
    // A shared cap ends the runs in flight with budget_exceeded, naming the shared budget; an abort cancels them.
    const shared = runs.find((r) => r.outcome === 'budget_exceeded' && r.reason?.includes('shared budget') === true);
    const cancelled = runs.find((r) => r.outcome === 'cancelled');
    const why =
      cap !== undefined
        ? `the batch's cap was reached: ${cap}`
        : shared !== undefined
          ? `the shared budget was spent (${shared.id}: ${shared.reason})`
          : cancelled !== undefined
            ? `it was cancelled (${cancelled.id}: ${cancelled.reason ?? 'cancelled'})`
            : 'its files do not say why';
    parts.push(`${skipped} of ${runs.length} tasks never started: ${why}`);
  }
  if (cut > 0) parts.push(`${cut} ${cut === 1 ? 'run was' : 'runs were'} cut off mid-turn (the batch was killed?)`);
  return parts.length === 0 ? undefined : parts.join('; ');
}
