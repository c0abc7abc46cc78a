import type { Logger } from 'winston';
import { getDefaultLogger } from './defaultLogger';
import type { HistorySink } from './HistorySink';
import { InvalidArgumentError } from './InvalidArgumentError';
import type { TransitionRecord } from './TransitionRecord';

// The checks of what a machine is given (options, a move's event), each naming the bad value.

export function assertHistorySize(size: unknown, name: string): asserts size is number {
  if (!(size === Infinity || (typeof size === 'number' && Number.isInteger(size) && size > 0))) {
    throw new InvalidArgumentError(name, 'a positive integer or Infinity', size);
  }
}

export function parseEvent(event: unknown, name: string): { description: string; data: unknown } {
  if (typeof event === 'string') return { description: event, data: undefined };
  if (typeof event === 'object' && event !== null) {
    // Each field is read once: a getter could answer a string to the check and a number after.
    const { description, data } = event as { description?: unknown; data?: unknown };
    if (typeof description === 'string') return { description, data };
  }
  throw new InvalidArgumentError(name, 'a description string or { description: string, data? }', event);
}

export function resolveLogger(logger: unknown): Logger | undefined {
  if (logger === false) return undefined;
  if (logger === undefined) return getDefaultLogger();
  const candidate = logger as Partial<Logger>;
  if (
    typeof logger !== 'object' ||
    logger === null ||
    typeof candidate.warn !== 'function' ||
    typeof candidate.isLevelEnabled !== 'function'
  ) {
    throw new InvalidArgumentError('logger', 'a winston logger or false', logger);
  }
  return logger as Logger;
}

export function resolveSink<S extends string>(sink: unknown): HistorySink<S> | undefined {
  if (sink === undefined) return undefined;
  if (typeof sink === 'function') return { write: sink as (record: TransitionRecord<S>) => void };
  if (typeof sink === 'object' && sink !== null && typeof (sink as HistorySink<S>).write === 'function')
    return sink as HistorySink<S>;
  throw new InvalidArgumentError('sink', 'a function or an object with write(record)', sink);
}

/** The clock's first reading, once the clock is checked: a function returning finite epoch milliseconds. */
export function firstReading(clock: unknown): number {
  if (typeof clock !== 'function')
    throw new InvalidArgumentError('clock', 'a function returning epoch milliseconds', clock);
  const now: unknown = clock();
  if (typeof now !== 'number' || !Number.isFinite(now))
    throw new InvalidArgumentError('clock()', 'a finite number of milliseconds', now);
  return now;
}
