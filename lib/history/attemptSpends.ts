import { readRunFile } from './readRunFile';
import type { AttemptSpend } from './spendOverAttempts';

/** An attempt of a run, as its readers take it: a history file (`name` is its path), or a store's lines (`input`). */
export interface AttemptLines {
  readonly name: string;
  readonly input?: () => AsyncIterable<Uint8Array>;
}

/**
 * What each of a run's earlier attempts (the oldest first) spent, the parts apart, read past
 * damaged lines: for `spendOfRun`, so that a run's money and its reasons count every attempt.
 * An attempt that cannot be read adds nothing, as on resume; `onUnreadable` hears of it, and
 * may throw to fail the read instead (a store whose connection was lost).
 */
export async function attemptSpends(
  attempts: readonly AttemptLines[],
  options: { maxLineBytes?: number; onUnreadable?: (name: string, error: unknown) => void } = {},
): Promise<AttemptSpend[]> {
  const spends: AttemptSpend[] = [];
  for (const attempt of attempts) {
    try {
      const facts = await readRunFile(attempt.name, {
        salvage: true,
        ...(options.maxLineBytes === undefined ? {} : { maxLineBytes: options.maxLineBytes }),
        onWarning: () => undefined,
        ...(attempt.input === undefined ? {} : { input: attempt.input() }),
      });
      spends.push(facts.attempt);
    } catch (error) {
      options.onUnreadable?.(attempt.name, error);
    }
  }
  return spends;
}
