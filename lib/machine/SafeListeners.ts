import type EventEmitter from 'eventemitter3';
import { isThenable } from '../internal/isThenable';
import { InvalidArgumentError } from './InvalidArgumentError';

// A wrapped listener: every event of the machine carries exactly one argument.
type AnyListener = (arg: unknown) => void;

/**
 * A machine's listeners, each wrapped so that one that throws or rejects is reported through
 * `threw` and never reaches the move or the other listeners. Kept apart from the emitter's
 * `emit`, which the machine calls directly on its hot path.
 */
export class SafeListeners {
  readonly #emitter: EventEmitter;
  readonly #threw: (event: string, error: unknown) => void;
  // Made on first use: a machine nobody listens to stays small.
  #wrappers: Map<string, Map<unknown, AnyListener[]>> | undefined;

  constructor(emitter: EventEmitter, threw: (event: string, error: unknown) => void) {
    this.#emitter = emitter;
    this.#threw = threw;
  }

  /** Adds `listener` to `event`, wrapped; with `once`, removed before its first call. */
  add(event: string, listener: unknown, once: boolean): void {
    if (typeof listener !== 'function') throw new InvalidArgumentError('listener', 'a function', listener);
    // Every event of the machine carries exactly one argument: passing it on as such spares
    // each notification the rest array and the spread call of `(...args) => listener(...args)`.
    const call = listener as (arg: unknown) => unknown;
    // Small, the failure handled out of line, so it inlines into emit (bench: transition).
    const safe = once
      ? (arg: unknown): void => {
          this.#unregister(event, listener, safe);
          try {
            const returned: unknown = call(arg);
            // An async listener that rejects would otherwise be an unhandled rejection, which ends the process.
            if (isThenable(returned)) returned.then(undefined, (error: unknown) => this.#threw(event, error));
          } catch (error) {
            this.#threw(event, error);
          }
        }
      : (arg: unknown): void => {
          try {
            const returned: unknown = call(arg);
            if (isThenable(returned)) returned.then(undefined, (error: unknown) => this.#threw(event, error));
          } catch (error) {
            this.#threw(event, error);
          }
        };
    const wrappers = (this.#wrappers ??= new Map());
    let byListener = wrappers.get(event);
    if (byListener === undefined) wrappers.set(event, (byListener = new Map()));
    const list = byListener.get(listener) ?? [];
    list.push(safe);
    byListener.set(listener, list);
    this.#emitter.on(event, safe);
  }

  /** Removes the last wrapper added for `listener` on `event`, if any. */
  remove(event: string, listener: unknown): void {
    const safe = this.#wrappers?.get(event)?.get(listener)?.at(-1);
    if (safe !== undefined) this.#unregister(event, listener, safe);
  }

  #unregister(event: string, listener: unknown, safe: AnyListener): void {
    const byListener = this.#wrappers?.get(event);
    const list = byListener?.get(listener);
    const index = list === undefined ? -1 : list.indexOf(safe);
    if (index === -1) return;
    list!.splice(index, 1);
    if (list!.length === 0) byListener!.delete(listener);
    this.#emitter.off(event, safe);
  }
}
