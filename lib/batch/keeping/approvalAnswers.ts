import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { escapeControl } from '../../internal/escapeControl';
import { messageOf } from '../../internal/messageOf';
import { InvalidArgumentError } from '../../machine/InvalidArgumentError';

/**
 * The folder of a batch's history folder where people's answers to approval requests wait for
 * the batch (`agent-sm approve|deny <folder> <run>`): one file per answered call, named after
 * the run and the call, made whole or not at all (written to a temporary file, then linked into
 * place, which fails if the call was answered already). The running batch takes each answer
 * once, when the run waits on that call (one written while the batch was down is taken when it
 * resumes and the run waits again), and renames its file to `<name>.taken`.
 */
// Not `*.jsonl`: readers of the folder take those for runs.
export const ANSWERS_DIR = 'batch.answers';

/** One answer: the run (task id) and call it answers, and how. */
export interface FolderAnswer {
  run: string;
  callId: string;
  approved: boolean;
  /** With `approved: false`: what the LLM gets as the call's result (`denied: <reason>`). */
  reason?: string;
  /** When it was given, epoch milliseconds. */
  at: number;
  /** When the call's wait began (the AwaitingApproval move's time), as the answerer read it. */
  waitingSince?: number;
  /** Who answered (`agent-sm approve --by`, by default the user's login name). */
  by?: string;
}

/** An answer read from the folder, with its file's name and whether the batch took it. */
export interface StoredAnswer extends FolderAnswer {
  file: string;
  taken: boolean;
}

/** The answer file's name for `callId` of run `run`: a hash, as ids may hold any character. */
export function answerFileName(run: string, callId: string): string {
  return `${createHash('sha256')
    .update(JSON.stringify([run, callId]))
    .digest('hex')
    .slice(0, 32)}.json`;
}

/** Thrown when a call has its answer already: `existing` is it. */
export class AnsweredAlreadyError extends Error {
  readonly existing: Pick<FolderAnswer, 'approved' | 'by' | 'at'> | undefined;
  constructor(
    answer: Pick<FolderAnswer, 'run' | 'callId'>,
    existing: Pick<FolderAnswer, 'approved' | 'by' | 'at'> | undefined,
    then = 'an answer is taken once; see `agent-sm approvals <folder>` for the calls still waiting',
  ) {
    const how =
      existing === undefined
        ? ''
        : ` (${existing.approved ? 'approved' : 'denied'}${existing.by === undefined ? '' : ` by ${escapeControl(existing.by)}`} at ${iso(existing.at)})`;
    super(
      `call ${escapeControl(answer.callId)} of run ${escapeControl(answer.run)} was answered already${how}: ${then}`,
    );
    this.name = 'AnsweredAlreadyError';
    this.existing = existing;
  }
}

/**
 * Writes `answer` into `dir`'s answers folder, whole or not at all, and forced to the disk.
 * Throws `AnsweredAlreadyError` when the call has an answer there already, waiting or taken
 * for the same wait.
 */
export function writeAnswer(dir: string, answer: FolderAnswer): void {
  if (typeof answer.run !== 'string' || answer.run === '')
    throw new InvalidArgumentError('run', 'a task id (a non-empty string)', answer.run);
  if (typeof answer.callId !== 'string' || answer.callId === '')
    throw new InvalidArgumentError('callId', 'a call id (a non-empty string)', answer.callId);
  const folder = path.join(dir, ANSWERS_DIR);
  fs.mkdirSync(folder, { recursive: true });
  const name = answerFileName(answer.run, answer.callId);
  const taken = readAnswerFile(folder, `${name}.taken`, true);
  if (taken !== undefined && taken.waitingSince === answer.waitingSince) throw new AnsweredAlreadyError(answer, taken);
  const temporary = path.join(folder, `.${name}.${process.pid}.${Date.now()}.tmp`);
  const fd = fs.openSync(temporary, 'wx');
  try {
    fs.writeSync(fd, `${JSON.stringify(answer)}\n`);
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  try {
    // A link, not a rename: it fails when the name is there, so of two answers only one is made.
    fs.linkSync(temporary, path.join(folder, name));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST')
      throw new AnsweredAlreadyError(answer, readAnswerFile(folder, name, false));
    throw error;
  } finally {
    fs.rmSync(temporary, { force: true });
  }
}

/** Every answer of `dir`'s answers folder, waiting and taken, with the problem of each file that is not one. */
export function readAnswers(dir: string): { answers: StoredAnswer[]; problems: string[] } {
  const folder = path.join(dir, ANSWERS_DIR);
  let names: string[];
  try {
    names = fs.readdirSync(folder);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { answers: [], problems: [] };
    throw error;
  }
  const answers: StoredAnswer[] = [];
  const problems: string[] = [];
  for (const name of names.sort()) {
    const taken = name.endsWith('.json.taken');
    if (!taken && !name.endsWith('.json')) continue;
    try {
      const answer = readAnswerFile(folder, name, taken);
      if (answer !== undefined) answers.push(answer);
    } catch (error) {
      problems.push(messageOf(error));
    }
  }
  return { answers, problems };
}

/** Marks an answer taken by the batch: its file is renamed, so it is never taken again. */
export function markTaken(dir: string, answer: StoredAnswer): void {
  const folder = path.join(dir, ANSWERS_DIR);
  fs.renameSync(path.join(folder, answer.file), path.join(folder, `${answer.file}.taken`));
}

function readAnswerFile(folder: string, name: string, taken: boolean): StoredAnswer | undefined {
  let text: string;
  try {
    text = fs.readFileSync(path.join(folder, name), 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new Error(`${ANSWERS_DIR}/${name} is not JSON (${messageOf(error)})`, { cause: error });
  }
  const v = value as Partial<FolderAnswer> | null;
  if (
    typeof v !== 'object' ||
    v === null ||
    typeof v.run !== 'string' ||
    typeof v.callId !== 'string' ||
    typeof v.approved !== 'boolean' ||
    typeof v.at !== 'number' ||
    (v.reason !== undefined && typeof v.reason !== 'string') ||
    (v.by !== undefined && typeof v.by !== 'string')
  )
    throw new Error(`${ANSWERS_DIR}/${name} is not { run, callId, approved, reason?, at, by? }`);
  return { ...(v as FolderAnswer), file: taken ? name.slice(0, -'.taken'.length) : name, taken };
}

function iso(at: number): string {
  return new Date(at).toISOString();
}
