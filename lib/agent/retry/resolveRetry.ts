import { InvalidArgumentError } from '../../machine/InvalidArgumentError';
import { defaultShouldRetry, type ResolvedRetry } from './retryAfter';
import type { RetryOptions } from './retryDelay';
import { assertNonNegative } from '../options/assertNonNegative';
import { assertKnownOptions, type OptionKeys } from '../../machine/assertKnownOptions';

const RETRY_KEYS: OptionKeys<RetryOptions> = {
  retries: true,
  baseDelayMs: true,
  maxDelayMs: true,
  shouldRetry: true,
  delayMs: true,
};

/** The `retry` option checked, with its defaults filled in. */
export function resolveRetry(retry: unknown): ResolvedRetry {
  if (typeof retry !== 'object' || retry === null)
    throw new InvalidArgumentError(
      'retry',
      'an object { retries?, baseDelayMs?, maxDelayMs?, shouldRetry?, delayMs? }',
      retry,
    );
  // A misspelt key (`maxAttempts`, `retry`) would leave the default in force unseen.
  assertKnownOptions(retry as RetryOptions, RETRY_KEYS, 'the `retry` option');
  const {
    retries = 2,
    baseDelayMs = 500,
    maxDelayMs = 30_000,
    shouldRetry = defaultShouldRetry,
    delayMs,
  } = retry as RetryOptions;
  if (!(Number.isInteger(retries) && retries >= 0))
    throw new InvalidArgumentError('retry.retries', 'a non-negative integer', retries);
  assertNonNegative(baseDelayMs, 'retry.baseDelayMs');
  assertNonNegative(maxDelayMs, 'retry.maxDelayMs');
  if (typeof shouldRetry !== 'function')
    throw new InvalidArgumentError('retry.shouldRetry', 'a function (error) => boolean', shouldRetry);
  if (delayMs !== undefined && typeof delayMs !== 'function')
    throw new InvalidArgumentError('retry.delayMs', 'a function (error, attempt) => ms or undefined', delayMs);
  return delayMs === undefined
    ? { retries, baseDelayMs, maxDelayMs, shouldRetry }
    : { retries, baseDelayMs, maxDelayMs, shouldRetry, delayMs };
}
