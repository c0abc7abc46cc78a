import { messageOf } from './messageOf';

/** `value` as an Error: itself when it is one, else an Error saying what it was. */
export function asError(value: unknown): Error {
  return value instanceof Error ? value : new Error(messageOf(value));
}
