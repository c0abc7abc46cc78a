import { TURN_OUTCOMES } from '../../internal/turnOutcomes';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { RecordedLine } from '../../agent/journal/RunRecording';
import type { TurnOutcome } from '../../agent/TurnOutcome';
import { emptyUsage, type UsageTotals } from '../../agent/UsageTotals';
import { HistoryFileError } from '../../history/HistoryFileError';
import { readRunFile, type RunFileFacts } from '../../history/readRunFile';
import type { RunUsage } from '../../history/runFacts';
import type { AttemptSpend } from '../../history/spendOverAttempts';
import { InvalidArgumentError } from '../../machine/InvalidArgumentError';
import type { UncertainReasons } from '../../internal/formatSpend';
import { messageOf } from '../../internal/messageOf';
import { readBatchManifest, type BatchManifest } from '../keeping/batchManifest';
import { attemptsBeside, attemptsByRunFile } from '../keeping/attemptNames';
import { EndedRunCache, endedRunOf } from './EndedRunCache';
import { unchangedSince, type KeptJournals } from './KeptJournals';

/** What an interrupted batch's folder says of each of its tasks. */
export type TaskState =
  /**
   * Its run ended (a terminal move): it is not run again; its report comes from its file —
   * why it failed (`reason`, for an outcome other than `end_of_turn`, when its file says), how
   * long it ran (its file's first to last move), and why its money is uncertain or of unknown
   * cost (`uncertain`, `unpriced`: when it has such calls) included.
   */
  | {
      kind: 'finished';
      outcome: TurnOutcome;
      usage: UsageTotals;
      transitions: number;
      file: string;
      reason: string | undefined;
      durationMs: number;
      uncertain?: UncertainReasons;
      unpriced?: UncertainReasons;
      /**
       * Read from its file (not the folder's cache): what its attempt alone spent, the parts
       * apart; its reader adds the reasons of the attempts cut off before it (`EarlierRuns`).
       */
      attempt?: AttemptSpend;
      /** Read from its file after attempts cut off: what each attempt spent, the oldest first (its own last). */
      attempts?: readonly AttemptSpend[];
      /** With `salvage`: the damaged lines its file was read past. */
      salvaged?: Salvaged;
    }
  /**
   * Its run was cut off mid-turn: it runs again, and what it spent before counts — `usage`, its
   * cost over every attempt of the run (`spendOverAttempts`) once its earlier attempts are read;
   * `attempt`, what its file's attempt alone spent, the parts apart; `attempts`, what each
   * attempt cut off spent, the oldest first (its own last), once they are read.
   */
  | {
      kind: 'interrupted';
      usage: UsageTotals;
      file: string;
      attempt?: AttemptSpend;
      attempts?: readonly AttemptSpend[];
      salvaged?: Salvaged;
    }
  /** It never wrote a file: it runs. */
  | { kind: 'not_started' };

/** What `salvage` read past in one run file: its corrupt lines, by number, and why each was skipped. */
export interface Salvaged {
  file: string;
  skippedLines: number[];
  /** The reader's words for each skipped line (`file:line: skipped a corrupt line: why`). */
  warnings: string[];
}

/** How `resumeState` reads the run files. */
export interface ResumeReadOptions {
  /** Read past corrupt lines (a power cut's NUL hole) instead of refusing the batch; each file salvaged is said in its state. */
  salvage?: boolean;
}

const OUTCOMES: ReadonlySet<string> = new Set<string>(TURN_OUTCOMES);

/**
 * Reads the folder of an earlier run of this batch (its `batch.json` and run files): which
 * tasks ended, which were cut off, which never started, and what each spent. The tasks must be
 * the manifest's, in order: resuming another batch into a folder would mix two batches' runs.
 */
export async function resumeState(
  dir: string,
  ids: readonly string[],
  options: ResumeReadOptions = {},
  kept?: KeptJournals,
): Promise<TaskState[]> {
  const manifest = await readBatchManifest(dir);
  if (manifest === undefined) {
    throw new InvalidArgumentError(
      'resume',
      `true only for a historyDir that holds an earlier run of this batch (its batch.json manifest); ${dir} has none: to start this batch there, leave out \`resume\``,
      true,
    );
  }
  const why = taskMismatch(manifest, ids);
  if (why !== undefined)
    throw new InvalidArgumentError(
      'resume',
      `the same tasks, in the same order, as the batch in ${dir} (${why}): pass the tasks that batch ran (its batch.json lists their ids, in order), or, to start this batch instead, leave out \`resume\` and give another \`historyDir\``,
      true,
    );
  // One file at a time, streamed: a folder of 10,000 runs must not hold 10,000 open files or their entries.
  const cache = EndedRunCache.read(dir);
  const states: TaskState[] = [];
  // The attempts set aside, listed once, and only if a run has no file or ended after attempts.
  let listing: Map<string, string[]> | undefined;
  const setAside = (file: string): boolean =>
    (listing ??= attemptsByRunFile(fs.readdirSync(dir))).has(path.basename(file));
  for (const { file } of manifest.tasks) {
    const at = path.join(dir, file);
    const ended = cache.lookup(at);
    states.push(
      ended !== undefined
        ? { kind: 'finished', ...ended, file: at }
        : await taskState(at, options.salvage === true, cache, kept, setAside),
    );
  }
  cache.flush();
  return states;
}

/**
 * Why the tasks given are not the ones a batch's manifest lists, in order; undefined when they are.
 * Resuming another batch would mix two batches' runs.
 */
export function taskMismatch(manifest: BatchManifest, ids: readonly string[]): string | undefined {
  const listed = manifest.tasks.map((t) => t.id);
  if (listed.length !== ids.length) return `it lists ${listed.length} tasks, this batch has ${ids.length}`;
  const differs = ids.findIndex((id, i) => listed[i] !== id);
  return differs === -1
    ? undefined
    : `task ${differs} is ${JSON.stringify(listed[differs])} there, ${JSON.stringify(ids[differs])} here`;
}

/**
 * Reads a run's file whole and says its state. A clean file that ended goes in `cache`, so that
 * the next resume need not read it again, unless attempts were set aside beside it (its reasons
 * cover theirs only once its reader adds them); the journal of one cut off, in `kept` (when it
 * has room), so that its run need not read it again. `setAside`: whether attempts of a run file
 * are kept beside it (its folder is listed when not given).
 */
export async function taskState(
  file: string,
  salvage: boolean,
  cache?: EndedRunCache,
  kept?: KeptJournals,
  setAside: (file: string) => boolean = (f) => attemptsBeside(f).length > 0,
): Promise<TaskState> {
  let stat: fs.Stats;
  try {
    stat = fs.statSync(file);
  } catch {
    // Killed after a resume set its attempt aside, before the next one wrote its file: it was cut off.
    if (setAside(file)) return { kind: 'interrupted', usage: emptyUsage(), file };
    return { kind: 'not_started' };
  }
  const journal: RecordedLine[] | undefined = kept?.fits(stat.size) === true ? [] : undefined;
  const state = await linesState(
    file,
    undefined,
    salvage,
    (error) => unreadable(file, error),
    journal && ((line) => journal.push(line)),
  );
  // One that ended after attempts cut off is noted once its reasons cover them (the batch notes it as it ends).
  if (cache !== undefined && !(state.kind === 'finished' && setAside(file))) noteEnded(cache, file, stat, state);
  if (journal !== undefined && state.kind === 'interrupted')
    kept!.keep(file, stat.size, journal, unchangedSince(file, stat));
  return state;
}

/** Adds a run whose clean file ended to `cache`, as its file was at `stat`: the next resume need not read it. */
export function noteEnded(cache: EndedRunCache, file: string, stat: fs.Stats, state: TaskState): void {
  if (state.kind !== 'finished' || state.salvaged !== undefined) return;
  cache.add(file, stat, endedRunOf(state));
}

/**
 * What a run's lines say of its task: ended (`finished`) or cut off (`interrupted`), with what
 * it spent. Read from `input` when given (a store's lines), else from the file `name`; a run
 * that cannot be read is refused with `advice(error)`. Given `onJournal`, each of its journal
 * lines is handed to it in the same pass (those `readResumeJournal` would read).
 */
export async function linesState(
  name: string,
  input: AsyncIterable<Uint8Array> | undefined,
  salvage: boolean,
  advice: (error: unknown) => string,
  onJournal?: (line: RecordedLine) => void,
): Promise<Exclude<TaskState, { kind: 'not_started' }>> {
  let facts: RunFileFacts;
  const salvaged: Salvaged = { file: name, skippedLines: [], warnings: [] };
  try {
    // A cut last line is what a killed run leaves: expected here, and the run is restarted.
    facts = await readRunFile(
      name,
      {
        salvage,
        ...(input === undefined ? {} : { input }),
        onWarning: (w) => {
          if (w.code !== 'skipped_line') return;
          salvaged.skippedLines.push(w.line);
          salvaged.warnings.push(w.message);
        },
      },
      onJournal === undefined
        ? undefined
        : (entry) => {
            if (entry.kind === 'journal') onJournal(entry.journal);
          },
    );
  } catch (error) {
    throw new InvalidArgumentError('resume', advice(error), true);
  }
  return stateOfFacts(name, facts, salvaged.skippedLines.length === 0 ? undefined : salvaged);
}

/** Pure: what a run file's facts say of its task (see `linesState`); `salvaged`: the lines a salvaging read skipped. */
export function stateOfFacts(
  name: string,
  facts: RunFileFacts,
  salvaged?: Salvaged,
): Exclude<TaskState, { kind: 'not_started' }> {
  const usage = usageOf(facts.usage);
  // Spent by the ledger's rule: a call reserved but not answered when the run was cut off may have been billed.
  usage.costUsd = facts.costUsd;
  // Its money apart, as its report gave it: what of that is uncertain, and what was let go (a
  // resumed run goes on from them, so a cut-off attempt's released holds stay counted).
  usage.uncertainUsd = facts.uncertainUsd;
  usage.releasedUsd = facts.releasedUsd;
  // And the calls no figure holds (no price, no hold): the resumed run goes on counting them.
  usage.unpricedCalls = facts.unpricedCalls;
  const damaged = salvaged === undefined ? {} : { salvaged };
  if (facts.ended && OUTCOMES.has(facts.outcome))
    return {
      kind: 'finished',
      outcome: facts.outcome as TurnOutcome,
      usage,
      transitions: facts.transitions,
      file: name,
      reason: facts.outcome === 'end_of_turn' ? undefined : facts.reason,
      durationMs: facts.durationMs,
      // Why, for the report of a resume that does not run it again, as the report of its run said.
      ...(facts.uncertain.length === 0 ? {} : { uncertain: facts.uncertain }),
      ...(facts.unpriced.length === 0 ? {} : { unpriced: facts.unpriced }),
      attempt: facts.attempt,
      ...damaged,
    };
  return { kind: 'interrupted', usage, file: name, attempt: facts.attempt, ...damaged };
}

function usageOf(run: RunUsage | null): UsageTotals {
  const usage = emptyUsage();
  if (run === null) return usage;
  usage.costUsd = run.costUsd;
  usage.inputTokens = run.inputTokens;
  usage.outputTokens = run.outputTokens;
  usage.llmCalls = run.llmCalls;
  usage.toolCalls = run.toolCalls;
  return usage;
}

/**
 * Why a run file cannot be read, and what to do: the reader's own advice (`--salvage`) is for
 * the CLI, and `runBatch` has its own ways on.
 */
function unreadable(file: string, error: unknown): string {
  return `a folder whose run files can be read: ${unreadableRun(error)}. See what is left of it with \`npx agent-sm inspect ${file} --salvage\`; to run its task again from the beginning, move the file out of the folder and resume again`;
}

/**
 * Why a run's lines cannot be read, and, when they are damaged, that `salvage` reads past them
 * (the reader's own advice, \`--salvage\`, is for the CLI).
 */
export function unreadableRun(error: unknown): string {
  const damaged =
    error instanceof HistoryFileError && (error.code === 'corrupt_line' || error.code === 'line_too_long');
  const why =
    error instanceof HistoryFileError
      ? `${error.file}${error.line === undefined ? '' : `:${error.line}`}: ${error.reason.replace(/ \(read past corrupt lines with .*\)$/, '')}`
      : messageOf(error);
  return `${why}${damaged ? '. Resume with `salvage: true` to read past its damaged lines (what they held is lost)' : ''}`;
}
