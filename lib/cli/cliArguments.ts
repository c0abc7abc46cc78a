// The values of the CLI's options, parsed, or refused in commander's words.
import { InvalidArgumentError as CommanderArgumentError } from 'commander';

/** `maxCostUsd=0.10` into the limits given so far (the option repeats). */
export function budgetLimit(value: string, previous: Record<string, number>): Record<string, number> {
  const match = /^([A-Za-z]+)=(.+)$/.exec(value);
  const n = Number(match?.[2]);
  if (match === null || !Number.isFinite(n) || n < 0)
    throw new CommanderArgumentError(
      `expected limit=value with a non-negative number (e.g. maxCostUsd=0.10), got ${JSON.stringify(value)}`,
    );
  return { ...previous, [match[1]!]: n };
}

/** A `--n <count>` value: a whole number from 1. */
export function positiveInteger(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(n) || n < 1)
    throw new CommanderArgumentError(`expected a positive integer, got ${JSON.stringify(value)}`);
  return n;
}

/** A `--poll-ms <n>` value: whole milliseconds from 10 (a store is queried at each) to an hour. */
export function pollInterval(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(n) || n < 10 || n > 3_600_000)
    throw new CommanderArgumentError(
      `expected a whole number of milliseconds from 10 to 3600000 (an hour), got ${JSON.stringify(value)}`,
    );
  return n;
}
