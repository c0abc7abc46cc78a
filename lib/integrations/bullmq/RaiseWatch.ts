import type { Redis } from 'ioredis';
import { messageOf } from '../../internal/messageOf';
import { RAISES_CODE } from './budgetFields';
import { bounded } from './connection';

interface Waiter {
  after: number;
  resolve: (raised: boolean) => void;
}

/** How often a worker with runs parked at a paused cap reads their batches' raise counts (a raise message it missed). */
export const RAISE_POLL_MS = 1000;

/**
 * The runs of a worker parked at a paused cap, each waiting for a raise of its batch's cap
 * after the one it was refused under (or for the batch to stop on another limit: it then meets
 * that stop and ends). A raise is heard on the queue's raise channel
 * (`heard(budgetKey)`), and, should that message be missed (a reconnect), read from the
 * batch's raise count every `RAISE_POLL_MS` while a run waits.
 */
export class RaiseWatch {
  readonly #redis: Redis;
  readonly #timeoutMs: number;
  readonly #onError: (error: Error) => void;
  /** Budget key → the runs waiting on that batch. */
  readonly #waiting = new Map<string, Set<Waiter>>();
  #timer: ReturnType<typeof setInterval> | undefined;

  constructor(redis: Redis, timeoutMs: number, onError: (error: Error) => void) {
    this.#redis = redis;
    this.#timeoutMs = timeoutMs;
    this.#onError = onError;
  }

  /** Resolves true once the batch of `budgetKey` has had more than `after` raises; false when `signal` aborts first. */
  wait(budgetKey: string, after: number, signal: AbortSignal): Promise<boolean> {
    if (signal.aborted) return Promise.resolve(false);
    return new Promise<boolean>((resolve) => {
      const set = this.#waiting.get(budgetKey) ?? new Set();
      this.#waiting.set(budgetKey, set);
      const waiter: Waiter = {
        after,
        resolve: (raised) => {
          set.delete(waiter);
          if (set.size === 0) this.#waiting.delete(budgetKey);
          if (this.#waiting.size === 0) this.#stopPolling();
          signal.removeEventListener('abort', onAbort);
          resolve(raised);
        },
      };
      const onAbort = (): void => waiter.resolve(false);
      signal.addEventListener('abort', onAbort, { once: true });
      set.add(waiter);
      this.#startPolling();
      // A raise that came between the refusal and now.
      void this.#check(budgetKey);
    });
  }

  /** A raise message for the batch of `budgetKey`: its waiting runs look now. */
  heard(budgetKey: string): void {
    if (this.#waiting.has(budgetKey)) void this.#check(budgetKey);
  }

  close(): void {
    this.#stopPolling();
    for (const set of [...this.#waiting.values()]) for (const waiter of [...set]) waiter.resolve(false);
  }

  async #check(budgetKey: string): Promise<void> {
    let raises: number;
    try {
      const [count, stopped] = await bounded(
        this.#redis,
        `reading the raises of ${budgetKey}`,
        () => this.#redis.hmget(budgetKey, RAISES_CODE, 'x'),
        this.#timeoutMs,
      );
      // A batch stopped by another limit (or gone) lets its parked runs go on, to meet the stop and end.
      raises = stopped !== null || count === null ? Infinity : Number(count);
    } catch (error) {
      // The next poll tries again: a parked run waits on, it never goes on unraised.
      this.#onError(new Error(`a run parked at its batch's cap cannot read its raises: ${messageOf(error)}`));
      return;
    }
    for (const waiter of [...(this.#waiting.get(budgetKey) ?? [])]) if (raises > waiter.after) waiter.resolve(true);
  }

  #startPolling(): void {
    this.#timer ??= setInterval(() => {
      for (const key of this.#waiting.keys()) void this.#check(key);
    }, RAISE_POLL_MS);
    this.#timer.unref();
  }

  #stopPolling(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }
}
