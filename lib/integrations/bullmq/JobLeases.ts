import { DelayedError, type Job } from 'bullmq';
import type { Redis } from 'ioredis';
import { messageOf } from '../../internal/messageOf';
import type { BatchKeys } from './batchKeys';
import { RAISES_CODE } from './budgetFields';

/** How long a task of a paused batch waits before it asks again, should the raise that brings it back be missed. */
export const WAIT_MS = 60_000;

/**
 * A worker's jobs that hold no slot while a batch is paused at its cap. A parked run's job goes
 * to BullMQ's delayed list, due after a lease (`leaseMs`) the worker renews while the run lives
 * there: a worker that dies lets it come due, and whoever takes it reports the run lost (or runs
 * it again, under `retryLostRuns`), as when a worker dies with a run in flight. A task not
 * started waits in the delayed list too, until a raise brings it back.
 */
export class JobLeases {
  readonly #redis: Redis;
  readonly #leaseMs: number;
  readonly #within: <T>(what: string, operation: () => Promise<T>) => Promise<T>;
  readonly #onError: (error: Error) => void;

  constructor(
    redis: Redis,
    leaseMs: number,
    within: <T>(what: string, operation: () => Promise<T>) => Promise<T>,
    onError: (error: Error) => void,
  ) {
    this.#redis = redis;
    this.#leaseMs = leaseMs;
    this.#within = within;
    this.#onError = onError;
  }

  /** A parked run's job leaves the active list; false when it could not (the run then keeps its job and its processor). */
  async letGo(job: Job, token: string | undefined, taskId: string): Promise<boolean> {
    try {
      await this.#within(`parking run ${taskId}`, () => job.moveToDelayed(Date.now() + this.#leaseMs, token));
      return true;
    } catch (error) {
      this.#onError(new Error(`run ${taskId}: its job could not be let go while it is parked: ${messageOf(error)}`));
      return false;
    }
  }

  /** Renews a let-go job's lease until its run (`whole`) ends; then `ended()`, and the job goes. */
  keep(job: Job, whole: Promise<void>, ended: () => void): void {
    const timer = setInterval(
      () =>
        void job
          .changeDelay(this.#leaseMs)
          .catch((error: unknown) =>
            this.#onError(new Error(`run of job ${job.id}: its lease was not renewed: ${messageOf(error)}`)),
          ),
      Math.max(1, Math.floor(this.#leaseMs / 2)),
    );
    void whole
      .catch((error: unknown) => this.#onError(new Error(`run of job ${job.id}: ${messageOf(error)}`)))
      .finally(() => {
        clearInterval(timer);
        ended();
        // Its report is written: the job has nothing left to do (one left behind comes due and finds the run reported).
        return job.remove().catch(() => undefined);
      });
  }

  /**
   * A job this worker took as it closed, its run not begun: it goes back, due now, for another
   * worker. Throws BullMQ's DelayedError, which ends the processor without finishing the job.
   * Should Redis refuse the move, the job keeps this worker's lock until it lapses, and BullMQ's
   * stalled-job check hands it to another worker then: its run was never begun, so it runs.
   */
  async handBack(job: Job, token: string | undefined, taskId: string): Promise<never> {
    try {
      await this.#within(`handing back run ${taskId}`, () => job.moveToDelayed(Date.now(), token));
    } catch (error) {
      this.#onError(new Error(`run ${taskId}: the closing worker could not hand its job back: ${messageOf(error)}`));
    }
    throw new DelayedError();
  }

  /**
   * A task of a batch paused at its cap (`begin` answered `wait` after `raises` raises) waits for
   * a raise, holding no slot: its job is delayed, and the raise brings it back (`raiseCap`
   * promotes the jobs that waited); should that be missed, it comes back after `WAIT_MS` and
   * asks again. Throws BullMQ's DelayedError, which ends the processor without finishing the job.
   */
  async waitForRaise(job: Job, token: string | undefined, keys: BatchKeys, raises: number): Promise<never> {
    await this.#within(`delaying job ${job.id} until the cap is raised`, () =>
      job.moveToDelayed(Date.now() + WAIT_MS, token),
    );
    // A raise between `begin` and the move found no job to bring back: bring it back now.
    const now = Number(
      (await this.#within('reading the raises', () => this.#redis.hget(keys.budget, RAISES_CODE))) ?? 0,
    );
    if (now > raises) await job.promote().catch(() => undefined);
    throw new DelayedError();
  }
}
