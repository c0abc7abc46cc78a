import type * as DateFnsFormat from 'date-fns/format';
import { requireOptional } from './requireOptional';

/** date-fns's `format`, loaded at the first time shown. */
let format: typeof DateFnsFormat.format | undefined;

/** The largest epoch-millisecond value a Date can hold. */
const MAX_DATE_MS = 8.64e15;

/**
 * `at` (epoch milliseconds) in the date-fns `pattern`; a value no Date can hold (NaN, a
 * nanosecond clock's 1.7e18) is shown as the number it is, marked, instead of throwing.
 */
export function formatTime(at: unknown, pattern: string): string {
  if (typeof at !== 'number' || !Number.isFinite(at) || Math.abs(at) > MAX_DATE_MS) return `${String(at)} (not a time)`;
  format ??= requireOptional<typeof DateFnsFormat>('date-fns/format').format;
  return format(at, pattern);
}
