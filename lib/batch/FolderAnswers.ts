import { messageOf } from '../internal/messageOf';
import { markTaken, readAnswers, type StoredAnswer } from './approvalAnswers';
import type { BatchApprovalRequest } from './ParkedRuns';

/** How often a running batch reads its folder's answers while a run waits for one. */
export const ANSWER_POLL_MS = 200;

/**
 * The answers a person gives from the terminal (`agent-sm approve|deny <folder>`) to the runs
 * of a folder batch parked for approval: the batch tells it each parked run's request
 * (`asked`) and when the run goes on (`left`); while one waits, it reads the folder's answers
 * every `ANSWER_POLL_MS` and gives each waiting answer to its run, once, and marks it taken
 * once the run has taken it (`taken`: the run journaled it, or the last answer reached it in a
 * slot), so that a crash before then leaves it for the resumed run. An answer to a run that
 * does not wait (yet) is kept for when it does: one written while the batch was down is taken
 * once the resumed run waits again.
 */
export class FolderAnswers {
  readonly #dir: string;
  readonly #log: { warn: (m: string) => void; error: (m: string) => void } | undefined;
  /** Parked runs by task id: the request that answers them. */
  readonly #waiting = new Map<string, BatchApprovalRequest>();
  /** Answers given to a run and not marked taken yet (the run has not taken them), by run. */
  readonly #given = new Map<string, StoredAnswer[]>();
  /** Answer files refused already (told once). */
  readonly #refused = new Set<string>();
  #timer: ReturnType<typeof setInterval> | undefined;

  constructor(dir: string, log?: { warn: (m: string) => void; error: (m: string) => void }) {
    this.#dir = dir;
    this.#log = log;
  }

  /** Run `request.id` parked: its answers in the folder are taken now, the rest as they come. */
  asked(request: BatchApprovalRequest): void {
    this.#waiting.set(request.id, request);
    this.#poll();
    if (this.#timer === undefined && this.#waiting.size > 0) {
      // Not unref'd: a batch whose runs all wait on answers from the folder has nothing else to keep it alive.
      this.#timer = setInterval(() => this.#poll(), ANSWER_POLL_MS);
    }
  }

  /** Run `id` went on or ended: answers to it are no longer its own to take. */
  left(id: string): void {
    this.#waiting.delete(id);
    if (this.#waiting.size === 0) this.stop();
  }

  /** Run `id` took the answers it was given (or ended without them): their files are marked taken. */
  taken(id: string): void {
    const given = this.#given.get(id) ?? [];
    this.#given.delete(id);
    for (const answer of given)
      try {
        markTaken(this.#dir, answer);
      } catch (error) {
        this.#log?.error(
          `cannot mark the answer to call ${answer.callId} of run ${answer.run} taken: ${messageOf(error)}`,
        );
      }
  }

  stop(): void {
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#timer = undefined;
  }

  #poll(): void {
    let read: ReturnType<typeof readAnswers>;
    try {
      read = readAnswers(this.#dir);
    } catch (error) {
      this.#log?.error(`cannot read the answers folder: ${messageOf(error)}`);
      return;
    }
    for (const problem of read.problems)
      if (!this.#refused.has(problem)) {
        this.#refused.add(problem);
        this.#log?.error(`${problem}; skipped`);
      }
    const given = new Set([...this.#given.values()].flat().map((a) => a.file));
    for (const answer of read.answers) if (!answer.taken && !given.has(answer.file)) this.#take(answer);
  }

  /** Gives `answer` to its run if it waits on that call (marked taken once the run took it); else leaves it for later. */
  #take(answer: StoredAnswer): void {
    const request = this.#waiting.get(answer.run);
    if (request === undefined || !request.calls.some((c) => c.callId === answer.callId)) return;
    try {
      if (answer.approved) request.approve(answer.callId);
      else request.deny(answer.callId, answer.reason ?? 'denied by a person');
    } catch (error) {
      // Answered in process already, or the run went on: the file's answer is not its.
      if (!this.#refused.has(answer.file)) {
        this.#refused.add(answer.file);
        this.#log?.warn(`the answer to call ${answer.callId} of run ${answer.run} was not taken: ${messageOf(error)}`);
      }
      return;
    }
    const given = this.#given.get(answer.run) ?? [];
    given.push(answer);
    this.#given.set(answer.run, given);
  }
}
