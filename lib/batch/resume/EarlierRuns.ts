import type { RecordedLine } from '../../agent/journal/RunRecording';
import { InvalidArgumentError } from '../../machine/InvalidArgumentError';
import { HistoryFileError } from '../../history/HistoryFileError';
import { bestJournal, readResumeJournal, type RunAttempt } from '../keeping/readResumeJournal';
import { KeptJournals } from './KeptJournals';
import { FolderAttempts } from '../keeping/attemptNames';
import { linesState, resumeState, taskMismatch, unreadableRun, type TaskState } from './resumeState';
import type { StoreBatch } from '../keeping/RunStore';
import {
  reasonsOverAttempts,
  releasedOverAttempts,
  spendOverAttempts,
  uncertainOverAttempts,
  unpricedOverAttempts,
  type AttemptSpend,
} from '../../history/spendOverAttempts';

/**
 * What a resumed batch reads of its earlier attempt, from a folder or a store: each task's state,
 * the journal a cut-off run continues from, and how that run's attempt is set aside, kept, so
 * that the new attempt does not overwrite it. One logic for both: a store gives the lines a
 * file holds, and the same readers read them.
 */
export interface EarlierRuns {
  /** Each task's state, in task order. */
  readonly states: readonly TaskState[];
  /** The journal the cut-off run of task `index` continues from: its attempts' best. */
  journal(index: number): Promise<RecordedLine[]>;
  /** Sets the cut-off attempt of task `index` aside, kept readable, before its new attempt opens. */
  setAside(index: number): Promise<void>;
}

/** A folder's earlier runs: `<dir>/batch.json` and its run files; an attempt set aside is renamed `<file>.interrupted`. */
export async function folderEarlierRuns(dir: string, ids: readonly string[], salvage: boolean): Promise<EarlierRuns> {
  // A cut-off run's journal is read with its state, in one pass over its file.
  const kept = new KeptJournals();
  const states = await resumeState(dir, ids, { salvage }, kept);
  // One listing of the folder for every cut-off run's attempts, kept up to date as they are set aside.
  const folder = new FolderAttempts(dir);
  const attempts = (file: string): RunAttempt[] =>
    folder
      .of(file)
      .reverse()
      .map((name) => ({ name }));
  for (const [index, state] of states.entries())
    if (state.kind === 'interrupted') states[index] = await withEarlierSpend(state, attempts(state.file), salvage);
    else if (state.kind === 'finished') states[index] = await withEarlierReasons(state, attempts(state.file), salvage);
  const fileOf = (index: number): string => {
    const state = states[index];
    if (state === undefined || state.kind === 'not_started') throw new Error(`task ${index} has no earlier file`);
    return state.file;
  };
  return {
    states,
    journal: (index) => {
      const file = fileOf(index);
      return readResumeJournal(file, salvage, kept.take(file), attempts(file));
    },
    setAside: (index) => {
      // No file when the process that set the last attempt aside was killed before its next one wrote it.
      folder.setAside(fileOf(index));
      return Promise.resolve();
    },
  };
}

/** A store's earlier runs: the batch's manifest and each run's attempts, read through `batch` (opened with `resume`). */
export async function storeEarlierRuns(
  batch: StoreBatch,
  storeName: string,
  ids: readonly string[],
  salvage: boolean,
): Promise<EarlierRuns> {
  const where = `batch ${batch.batchId} in ${storeName}`;
  const manifest = batch.earlier;
  if (manifest === undefined)
    throw new InvalidArgumentError(
      'resume',
      `true only for a batchId the store holds: ${storeName} has no batch ${JSON.stringify(batch.batchId)}; to start this batch, leave out \`resume\``,
      true,
    );
  const why = taskMismatch(manifest, ids);
  if (why !== undefined)
    throw new InvalidArgumentError(
      'resume',
      `the same tasks, in the same order, as ${where} (${why}): pass the tasks that batch ran, in order, or, to start this batch instead, leave out \`resume\` and give another \`batchId\``,
      true,
    );
  const states: TaskState[] = [];
  // A cut-off run's journal is read with its state, in one pass over its lines.
  const kept = new KeptJournals();
  // One run at a time, streamed: a batch of 10,000 runs never holds more than one run's facts
  // (and the journals of cut-off runs, within `kept`'s room).
  for (const id of ids) states.push(await storeRunState(batch, id, salvage, kept));
  return {
    states,
    journal: (index) => storeRunJournal(batch, ids[index]!, salvage, kept),
    setAside: (index) => batch.setAside(ids[index]!),
  };
}

/**
 * What run `runId` of a batch in a store left: ended, cut off (with what it spent), or never
 * opened. For a batch's resume, and for a distributed batch's worker that takes over a run
 * whose worker was lost.
 */
export async function storeRunState(
  batch: StoreBatch,
  runId: string,
  salvage: boolean,
  kept?: KeptJournals,
): Promise<TaskState> {
  const [current, ...older] = await batch.attempts(runId);
  if (current === undefined) return { kind: 'not_started' };
  // A store's lines have no size before they are read: the journal is collected while its
  // bytes fit in `kept`'s room, and given up as soon as they do not.
  const read: Collected | undefined = kept === undefined ? undefined : { bytes: 0, journal: [] };
  const state = await linesState(
    current.name,
    read === undefined ? current.input : counted(current.input, read, kept!),
    salvage,
    (error) => `a store whose runs can be read: ${unreadableRun(error)}`,
    read && ((line) => read.journal?.push(line)),
  );
  // Unlike a folder's files, checked by size and mtime, a store batch's lines are this process's
  // while it resumes (the batch's lock, exclusive on both stores): no one else writes them.
  if (read?.journal !== undefined && state.kind === 'interrupted')
    kept!.keep(runId, read.bytes, read.journal, () => true);
  if (state.kind === 'interrupted') return withEarlierSpend(state, older, salvage);
  return state.kind === 'finished' ? withEarlierReasons(state, older, salvage) : state;
}

/** A run's lines as a store's resume reads them: their bytes so far, and its journal while it fits. */
interface Collected {
  bytes: number;
  journal: RecordedLine[] | undefined;
}

/**
 * The journal a cut-off run `runId` of a batch in a store continues from: its attempts' best.
 * Its live attempt's journal is taken from `kept` when the state's read kept it.
 */
export async function storeRunJournal(
  batch: StoreBatch,
  runId: string,
  salvage: boolean,
  kept?: KeptJournals,
): Promise<RecordedLine[]> {
  const attempts = await batch.attempts(runId);
  const [current, ...older] = attempts;
  const read = current === undefined ? undefined : kept?.take(runId);
  return bestJournal(read === undefined ? attempts : [{ name: current!.name, journal: read }, ...older], salvage);
}

/** `input`, its bytes counted into `read` as they are read; past `kept`'s room, the journal is given up. */
async function* counted(
  input: AsyncIterable<Uint8Array>,
  read: Collected,
  kept: KeptJournals,
): AsyncIterable<Uint8Array> {
  for await (const chunk of input) {
    read.bytes += chunk.byteLength;
    if (!kept.fits(read.bytes)) read.journal = undefined;
    yield chunk;
  }
}

type Interrupted = Extract<TaskState, { kind: 'interrupted' }>;

/**
 * A cut-off run's spend over all its attempts: its newest (`state`) and the earlier ones kept
 * beside it (`older`, the newest first). Each attempt adds what it spent by the ledger's rule —
 * the requests it made, and every reservation it left without an answer at its worst case — to
 * what the attempts before it spent (`spendOverAttempts`), so no attempt's uncertain money is
 * forgotten, however many crashes, and no call served again from a journal is counted twice.
 * Its other usage (calls, tokens) is the most any attempt's records carry: an attempt cut before
 * it wrote a record holds none, yet the next is served the calls of an earlier one. Without
 * them, spend and calls would be forgotten and `perRun` caps passed. An older attempt that
 * cannot be read adds nothing.
 */
async function withEarlierSpend(
  state: Interrupted,
  older: readonly RunAttempt[],
  salvage: boolean,
): Promise<Interrupted> {
  let usage = state.usage;
  const attempts: AttemptSpend[] = [attemptOf(state)];
  for (const attempt of older) {
    const kept = await olderState(attempt, salvage);
    if (kept === undefined) continue;
    attempts.unshift(attemptOf(kept));
    const more = kept.usage.costUsd - usage.costUsd || kept.usage.llmCalls - usage.llmCalls;
    if (more > 0) usage = kept.usage;
  }
  const costUsd = Math.max(state.usage.costUsd, spendOverAttempts(attempts));
  const uncertainUsd = Math.min(costUsd, Math.max(state.usage.uncertainUsd, uncertainOverAttempts(attempts)));
  // Each attempt's own calls of unknown cost, once: one cut before its records counts only its lines.
  const unpricedCalls = Math.max(state.usage.unpricedCalls, unpricedOverAttempts(attempts));
  // Each attempt's own releases, once: one cut after a release and before a record counts it too.
  const releasedUsd = Math.max(state.usage.releasedUsd, releasedOverAttempts(attempts));
  return { ...state, usage: { ...usage, costUsd, uncertainUsd, releasedUsd, unpricedCalls }, attempts };
}

type Finished = Extract<TaskState, { kind: 'finished' }>;

/**
 * A run that ended after attempts cut off (`older`, the newest first): why its money is
 * uncertain or of unknown cost, over every attempt, as the report of its run said. Its file's
 * lines name only the calls of its own attempt; it keeps what each attempt spent (`attempts`)
 * for a reader that must tell them apart. Read from its file only: a folder's cache keeps the
 * reasons over its attempts already. An older attempt that cannot be read adds nothing.
 */
async function withEarlierReasons(state: Finished, older: readonly RunAttempt[], salvage: boolean): Promise<Finished> {
  if (state.attempt === undefined || older.length === 0) return state;
  const attempts: AttemptSpend[] = [state.attempt];
  for (const attempt of older) {
    const kept = await olderState(attempt, salvage);
    if (kept !== undefined) attempts.unshift(attemptOf(kept));
  }
  const uncertain = reasonsOverAttempts(
    state.uncertain ?? [],
    attempts.map((a) => a.uncertainWhy),
  );
  const unpriced = reasonsOverAttempts(
    state.unpriced ?? [],
    attempts.map((a) => a.unpricedWhy),
  );
  return {
    ...state,
    ...(uncertain.length === 0 ? {} : { uncertain }),
    ...(unpriced.length === 0 ? {} : { unpriced }),
    attempts,
  };
}

/**
 * What an attempt set aside left, or undefined when its lines are not a run's (it adds nothing).
 * One whose lines could not be read at all (an I/O error, a lost connection: `read_failed`)
 * fails the resume: the money it spent would otherwise be forgotten, and a cap crossed.
 */
async function olderState(
  attempt: RunAttempt,
  salvage: boolean,
): Promise<Exclude<TaskState, { kind: 'not_started' }> | undefined> {
  let failed: unknown;
  const noted = (error: unknown): string => {
    failed = error;
    return '';
  };
  const state = await linesState(attempt.name, attempt.input, salvage, noted).catch(() => undefined);
  if (state === undefined && failed instanceof HistoryFileError && failed.code === 'read_failed')
    throw new InvalidArgumentError(
      'resume',
      `attempts set aside that can be read, as what each spent counts toward the caps: ${unreadableRun(failed)}. Make it readable (or, for a folder, move it out of the folder, its money then forgotten) and resume again`,
      true,
    );
  return state;
}

/** What one attempt spent, the parts apart; an attempt read without them (one that ended) counts what it spent. */
function attemptOf(state: Exclude<TaskState, { kind: 'not_started' }>): AttemptSpend {
  if (state.kind === 'interrupted' && state.attempt !== undefined) return state.attempt;
  const { costUsd, uncertainUsd, releasedUsd, unpricedCalls } = state.usage;
  return {
    recordedUsd: costUsd,
    liveUsd: 0,
    heldUsd: 0,
    recordedUncertainUsd: uncertainUsd,
    liveUncertainUsd: 0,
    recordedReleasedUsd: releasedUsd,
    liveReleasedUsd: 0,
    recordedUnpricedCalls: unpricedCalls,
    liveUnpricedCalls: 0,
    openUnpricedCalls: 0,
    uncertainWhy: [],
    unpricedWhy: [],
    ledger: false,
  };
}
