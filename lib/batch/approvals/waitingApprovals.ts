import type { HistoryEntry } from '../../history/HistoryEntry';
import { HistoryFileError } from '../../history/HistoryFileError';
import { readHistory } from '../../history/loadHistory';
import { summarizeHistory } from '../../history/summarizeHistory';
import { ignore } from '../../internal/ignore';
import type { StoredAnswer } from '../keeping/approvalAnswers';
import { folderAnswerBox, type AnswerBox } from './AnswerBox';
import { folderBatchSource, type BatchSource } from '../reading/BatchSource';

/** A tool call of a folder or store batch's run waiting for a person's answer. */
export interface WaitingCall {
  /** The run: its task id. */
  run: string;
  callId: string;
  /** The tool's name. */
  tool: string;
  /** The call's input as the LLM gave it (absent when it gave none). */
  input?: unknown;
  /** When the wait began (the AwaitingApproval move), epoch milliseconds. */
  since: number;
  /** The answer given (in the folder, in the store) to this wait: not taken yet (no batch runs, or it is about to), or taken and the run about to go on. */
  answer?: StoredAnswer;
}

/** An answer to a call of a run's wait that the run's journal holds already: taken, so the call waits no more. */
export interface JournaledAnswer {
  run: string;
  callId: string;
  approved: boolean;
  reason?: string;
  /** Who answered, when the answer said. */
  by?: string;
  /** When the run took it, epoch milliseconds. */
  at: number;
}

/** A folder or store batch's runs and the calls they wait on. */
export interface WaitingApprovals {
  /** A batch holds the folder now: it takes answers within a poll. */
  running: boolean;
  /** Every run (task id) of the batch, in task order. */
  runs: string[];
  /** The calls waiting, in task order then call order. */
  calls: WaitingCall[];
  /** Every answer given (in the folder, in the store), waiting or taken. */
  answers: StoredAnswer[];
  /** The answers the runs that wait journaled for their wait already (one of several calls answered, say). */
  journaled: JournaledAnswer[];
  /** What could not be read (an answer file, a run's history), each said once. */
  problems: string[];
}

/**
 * What waits for a person in the batch of history folder `dir`: each run whose history ends in
 * AwaitingApproval and the calls of that move that its journal holds no answer to (an
 * `approval` line after the move), with the answers given and not taken yet.
 * Throws `HistoryFileError` when `dir` is not a batch's folder.
 */
export async function readWaitingApprovals(dir: string): Promise<WaitingApprovals> {
  const source = await folderBatchSource(dir);
  if (source === undefined)
    throw new HistoryFileError(
      'read_failed',
      dir,
      'is not the history folder of a batch (no batch.json, no run files)',
    );
  return waitingApprovalsOf(source, folderAnswerBox(dir));
}

/** What waits for a person in the batch `source` reads (a folder's, a store's), with the answers `box` holds. */
export async function waitingApprovalsOf(source: BatchSource, box: AnswerBox): Promise<WaitingApprovals> {
  const { answers, problems } = await box.read();
  const calls: WaitingCall[] = [];
  const taken: JournaledAnswer[] = [];
  for (const run of source.runs) {
    if (run.lines === undefined) continue;
    let waiting;
    const journaled = new Map<string, JournaledAnswer>();
    try {
      ({ waiting } = await summarizeHistory(
        answersSinceLastMove(
          readHistory(run.lines.name, {
            onWarning: ignore,
            salvage: true,
            ...(run.lines.input === undefined ? {} : { input: run.lines.input() }),
          }),
          journaled,
          run.id,
        ),
      ));
    } catch (error) {
      problems.push(`cannot read run ${run.id}: ${(error as Error).message}`);
      continue;
    }
    if (waiting === undefined || waiting.state !== 'AwaitingApproval') continue;
    taken.push(...journaled.values());
    for (const request of waiting.requests) {
      const r = request as { callId?: unknown; name?: unknown; input?: unknown };
      // Answered and journaled already (the rest of the wait has not been): it waits no more.
      if (typeof r.callId !== 'string' || typeof r.name !== 'string' || journaled.has(r.callId)) continue;
      // Given and not taken yet, or taken for this very wait (the run is about to move on).
      const answer = answers.find(
        (a) => a.run === run.id && a.callId === r.callId && (!a.taken || a.waitingSince === waiting.at),
      );
      calls.push({
        run: run.id,
        callId: r.callId,
        tool: r.name,
        ...('input' in r ? { input: r.input } : {}),
        since: waiting.at,
        ...(answer === undefined ? {} : { answer }),
      });
    }
  }
  return { running: source.running, runs: source.runs.map((r) => r.id), calls, answers, journaled: taken, problems };
}

/** Passes `entries` on, keeping in `answered` the answers of the `approval` journal lines after the last move of run `run`. */
async function* answersSinceLastMove(
  entries: AsyncIterable<HistoryEntry>,
  answered: Map<string, JournaledAnswer>,
  run: string,
): AsyncGenerator<HistoryEntry, void, undefined> {
  for await (const entry of entries) {
    if (entry.kind === 'record') answered.clear();
    else if (
      entry.kind === 'journal' &&
      entry.journal.type === 'approval' &&
      entry.journal.asked !== true &&
      typeof entry.journal.callId === 'string'
    ) {
      const { callId, approved, reason, by, at } = entry.journal;
      answered.set(callId, {
        run,
        callId,
        approved: approved === true,
        ...(typeof reason === 'string' ? { reason } : {}),
        ...(typeof by === 'string' ? { by } : {}),
        at: typeof at === 'number' ? at : 0,
      });
    }
    yield entry;
  }
}
