import { messageOf } from '../../internal/messageOf';
import type { StoredAnswer } from '../keeping/approvalAnswers';
import type { AnswerBox } from './AnswerBox';
import type { BatchApprovalRequest } from './ParkedRuns';

/** How often a running batch reads its answers (its folder's, its store's) while a run waits for one. */
export const ANSWER_POLL_MS = 200;

/**
 * The answers a person gives from the terminal (`agent-sm approve|deny <folder>`, or `--store
 * URL <batchId>`) to the runs of a folder or store batch parked for approval, kept in its
 * `AnswerBox`: the batch tells it each parked run's request (`asked`) and when the run goes on
 * (`left`); while one waits, it reads the answers every `ANSWER_POLL_MS` (one read at a time)
 * and gives each waiting answer to its run, once, and marks it taken
 * once the run has taken it (`taken`: the run journaled it, or the last answer reached it in a
 * slot), so that a crash before then leaves it for the resumed run. An answer to a run that
 * does not wait (yet) is kept for when it does: one written while the batch was down is taken
 * once the resumed run waits again.
 */
export class PersonAnswers {
  readonly #box: AnswerBox;
  readonly #log: { warn: (m: string) => void; error: (m: string) => void } | undefined;
  /** Parked runs by task id: the request that answers them. */
  readonly #waiting = new Map<string, BatchApprovalRequest>();
  /** Answers given to a run and not marked taken yet (the run has not taken them), by run. */
  readonly #given = new Map<string, StoredAnswer[]>();
  /** Answer files refused already (told once). */
  readonly #refused = new Set<string>();
  #timer: ReturnType<typeof setInterval> | undefined;
  /** Answers being marked taken (a store's write under way): never given again meanwhile. */
  readonly #marking = new Set<string>();
  /** A read under way: the next poll waits for the one before. */
  #reading = false;

  constructor(box: AnswerBox, log?: { warn: (m: string) => void; error: (m: string) => void }) {
    this.#box = box;
    this.#log = log;
  }

  /** Run `request.id` parked: its answers given already are taken now, the rest as they come. */
  asked(request: BatchApprovalRequest): void {
    this.#waiting.set(request.id, request);
    void this.#poll();
    if (this.#timer === undefined && this.#waiting.size > 0) {
      // Not unref'd: a batch whose runs all wait on answers from the terminal has nothing else to keep it alive.
      this.#timer = setInterval(() => void this.#poll(), ANSWER_POLL_MS);
    }
  }

  /** Run `id` went on or ended: answers to it are no longer its own to take. */
  left(id: string): void {
    this.#waiting.delete(id);
    if (this.#waiting.size === 0) this.stop();
  }

  /** Run `id` took the answers it was given (or ended without them): they are marked taken. */
  taken(id: string): void {
    const given = this.#given.get(id) ?? [];
    this.#given.delete(id);
    for (const answer of given) {
      this.#marking.add(answer.file);
      this.#box
        .markTaken(answer)
        .catch((error: unknown) =>
          this.#log?.error(
            `cannot mark the answer to call ${answer.callId} of run ${answer.run} taken: ${messageOf(error)}`,
          ),
        )
        .finally(() => this.#marking.delete(answer.file));
    }
  }

  stop(): void {
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#timer = undefined;
  }

  async #poll(): Promise<void> {
    if (this.#reading) return;
    this.#reading = true;
    let read: Awaited<ReturnType<AnswerBox['read']>>;
    try {
      read = await this.#box.read();
    } catch (error) {
      this.#log?.error(`cannot read the answers of ${this.#box.where}: ${messageOf(error)}`);
      return;
    } finally {
      this.#reading = false;
    }
    for (const problem of read.problems)
      if (!this.#refused.has(problem)) {
        this.#refused.add(problem);
        this.#log?.error(`${problem}; skipped`);
      }
    const given = new Set([...this.#given.values()].flat().map((a) => a.file));
    for (const answer of read.answers)
      if (!answer.taken && !given.has(answer.file) && !this.#marking.has(answer.file)) this.#take(answer);
  }

  /** Gives `answer` to its run if it waits on that call (marked taken once the run took it); else leaves it for later. */
  #take(answer: StoredAnswer): void {
    const request = this.#waiting.get(answer.run);
    if (request === undefined || !request.calls.some((c) => c.callId === answer.callId)) return;
    try {
      const by = answer.by === undefined ? {} : { by: answer.by };
      if (answer.approved) request.approve(answer.callId, by);
      else request.deny(answer.callId, answer.reason ?? 'denied by a person', by);
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
