import { InvalidArgumentError } from '../../machine/InvalidArgumentError';

/**
 * The `ledger` option checked against `journal`: whether ledger lines are asked for on their
 * own. The journal always carries the ledger (a `reserve` line, fsync'ed, before each LLM call),
 * so that a resume never counts less than may have been billed: `ledger: false` beside a
 * journal cannot be honoured, and is refused rather than left without effect.
 */
export function resolveLedger(ledger: unknown, journalOn: boolean): boolean {
  if (ledger === undefined) return false;
  if (typeof ledger !== 'boolean') throw new InvalidArgumentError('ledger', 'true or false', ledger);
  if (!ledger && journalOn)
    throw new InvalidArgumentError(
      'ledger',
      "left out or true while `journal` is on (with a `historyDir` it is on unless `journal: false`): the journal always writes the ledger's lines, so that a resume never counts less than may have been billed; to write neither, set `journal: false` too",
      ledger,
    );
  return ledger;
}
