import { messageOf } from '../../internal/messageOf';

interface Waiter {
  until: (value: unknown) => boolean;
  resolve: (value: unknown) => void;
}

/** What the runs waiting on one key read, and who waits. */
interface Watched {
  read: () => Promise<unknown>;
  what: string;
  waiters: Set<Waiter>;
}

/** How often a worker with parked runs reads what they wait for (a message it missed). */
export const PARK_POLL_MS = 1000;

/**
 * The runs of a worker parked out of their slots, each waiting for something another process
 * writes in Redis: a raise of its batch's paused cap, the answers to its approval request. A
 * run waits on a key (its batch's budget, its request) with how to read it and when the value
 * lets it go; a message on the queue's channels (`heard(key)`) has the waiting runs read at
 * once, and, should that message be missed (a reconnect), they read every `PARK_POLL_MS` while
 * any waits. Runs waiting on the same key share one read.
 */
export class ParkWatch {
  readonly #onError: (error: Error) => void;
  readonly #waiting = new Map<string, Watched>();
  #timer: ReturnType<typeof setInterval> | undefined;

  constructor(onError: (error: Error) => void) {
    this.#onError = onError;
  }

  /**
   * Resolves with the first value `read` gives that `until` accepts, or undefined when `signal`
   * aborts first (or the watch closes). `read` is bounded by its caller; one that fails is said
   * through `onError` and tried again at the next poll: a parked run never goes on unreleased.
   * `what` names the wait in that message.
   */
  wait<T>(
    key: string,
    read: () => Promise<T>,
    until: (value: T) => boolean,
    signal: AbortSignal,
    what: string,
  ): Promise<T | undefined> {
    if (signal.aborted) return Promise.resolve(undefined);
    return new Promise<T | undefined>((resolve) => {
      const watched = this.#waiting.get(key) ?? { read, what, waiters: new Set<Waiter>() };
      this.#waiting.set(key, watched);
      const waiter: Waiter = {
        until: until as (value: unknown) => boolean,
        resolve: (value) => {
          watched.waiters.delete(waiter);
          if (watched.waiters.size === 0 && this.#waiting.get(key) === watched) this.#waiting.delete(key);
          if (this.#waiting.size === 0) this.#stopPolling();
          signal.removeEventListener('abort', onAbort);
          resolve(value as T | undefined);
        },
      };
      const onAbort = (): void => waiter.resolve(undefined);
      signal.addEventListener('abort', onAbort, { once: true });
      watched.waiters.add(waiter);
      this.#startPolling();
      // What was written between the park and now.
      void this.#check(key);
    });
  }

  /** A message for `key`: its waiting runs read now. */
  heard(key: string): void {
    if (this.#waiting.has(key)) void this.#check(key);
  }

  /** A message for every key that begins with `prefix` (each request of a run): their waiting runs read now. */
  heardUnder(prefix: string): void {
    for (const key of this.#waiting.keys()) if (key.startsWith(prefix)) void this.#check(key);
  }

  close(): void {
    this.#stopPolling();
    for (const watched of [...this.#waiting.values()])
      for (const waiter of [...watched.waiters]) waiter.resolve(undefined);
  }

  async #check(key: string): Promise<void> {
    const watched = this.#waiting.get(key);
    if (watched === undefined) return;
    let value: unknown;
    try {
      value = await watched.read();
    } catch (error) {
      this.#onError(new Error(`a run parked ${watched.what} cannot read ${key}: ${messageOf(error)}`));
      return;
    }
    for (const waiter of [...watched.waiters]) if (waiter.until(value)) waiter.resolve(value);
  }

  #startPolling(): void {
    this.#timer ??= setInterval(() => {
      for (const key of this.#waiting.keys()) void this.#check(key);
    }, PARK_POLL_MS);
    this.#timer.unref();
  }

  #stopPolling(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }
}
