import { HistoryFileError } from './HistoryFileError';
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
 * An attempt whose lines are not a run's adds nothing, as on resume; one that could not be read
 * at all (an I/O error, a lost connection: `read_failed`) is thrown, as the money it spent would
 * otherwise be forgotten without a word.
 */
export async function attemptSpends(
  attempts: readonly AttemptLines[],
  options: { maxLineBytes?: number } = {},
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
      if (error instanceof HistoryFileError && error.code === 'read_failed') throw error;
      // not a run's lines: it adds nothing
    }
  }
  return spends;
}
