import { messageOf } from '../../internal/messageOf';
import type { StateMachine } from '../../machine/StateMachine';
import type { JournalEntry, JournalOptions } from './JournalEntry';
import { redactCredentials } from './redactCredentials';

/**
 * The function a turn journals through: each entry is cleaned (credential-named fields
 * redacted, then the caller's `redact`) and handed to the machine's sink, in order with the
 * moves. A `reserve` or `approval` line returns the sink's commit, when it gives one. Never throws: a `redact` that throws writes a placeholder without the entry's
 * content, and a failing sink is the machine's `sinkError`.
 */
export function journalWriter(
  machine: StateMachine<string>,
  options: JournalOptions,
): (entry: JournalEntry) => PromiseLike<void> | undefined {
  const { redact } = options;
  return (entry) => {
    // The ledger's line holds no content (numbers and a model name): it is written as it is,
    // so that no redact can lose the record of money. Its commit (a store's) is the caller's to await.
    if (entry.type === 'reserve') return machine.journalCommit(entry);
    let clean: JournalEntry | Record<string, unknown>;
    try {
      const redacted = redactCredentials(entry);
      clean = redact === undefined ? redacted : redact(redacted);
    } catch (error) {
      // Where and when, never what: the content the redact could not clean is left out.
      clean = placeholder(entry, `redact threw: ${messageOf(error)}; the entry's content was not written`);
    }
    // An approval answer is kept before the tool runs, as a reservation is: its commit is the caller's to await.
    if (entry.type === 'approval') return machine.journalCommit(clean as JournalEntry);
    machine.journal(clean as JournalEntry);
    return undefined;
  };
}

/** What is written of `entry` when its redact threw: its kind, turn and times, and an approval's answer. */
function placeholder(entry: Exclude<JournalEntry, { type: 'reserve' }>, redactError: string): Record<string, unknown> {
  const { turn } = entry;
  if (entry.type === 'approval') {
    const { callId, name, at } = entry;
    // A question keeps `asked` (a resume re-asks it), an answer its `approved`.
    const how = entry.asked === true ? { asked: true } : { approved: entry.approved };
    return { type: 'approval', turn, callId, name, ...how, at, redactError };
  }
  const { startedAt, endedAt } = entry;
  return entry.type === 'llm'
    ? { type: 'llm', turn, operation: entry.operation, attempt: entry.attempt, startedAt, endedAt, redactError }
    : {
        type: 'tool',
        turn,
        call: { id: entry.call.id, name: entry.call.name },
        status: entry.status,
        startedAt,
        endedAt,
        redactError,
      };
}
