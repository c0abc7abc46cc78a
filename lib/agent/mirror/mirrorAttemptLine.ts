import type { LLMCallInput } from '../AgentEvents';
import type { AttemptEndLine, JournalEntry, LlmJournalEntry } from '../journal/JournalEntry';
import type { MirrorSlot } from './MirrorSlot';

/** Where a mirror's attempt lines go: the journal (content and money), else the ledger alone (money). */
export interface AttemptWriters {
  journal: ((entry: JournalEntry) => void) | undefined;
  ledger: ((entry: JournalEntry) => void) | undefined;
}

/** The attempt in flight, as its journal line names it. */
export interface AttemptFacts {
  turn: number;
  operation: 'sendUserMessage' | 'sendToolResults';
  attempt: number;
  startedAt: number;
  /** The run's user message, sent by `sendUserMessage`. */
  input: string;
  /** The tool calls whose results `sendToolResults` carries. */
  slots: readonly MirrorSlot[];
}

/** The journal line of an attempt, without its end. */
export function mirrorLlmLine(
  facts: AttemptFacts,
  endedAt: number,
): Omit<LlmJournalEntry, 'response' | 'costUsd' | 'error'> {
  const input: LLMCallInput =
    facts.operation === 'sendUserMessage'
      ? { kind: 'user_message', message: facts.input }
      : {
          kind: 'tool_results',
          results: facts.slots.map((s) => s.result!).filter((r) => r !== undefined),
          messages: [],
        };
  return {
    type: 'llm',
    turn: facts.turn,
    operation: facts.operation,
    attempt: Math.max(1, facts.attempt),
    startedAt: facts.startedAt,
    endedAt,
    input,
  };
}

/** An attempt's end in the journal, or, with the ledger alone, its cost and usage without content. */
export function writeAttemptLine(
  writers: AttemptWriters,
  facts: AttemptFacts,
  endedAt: number,
  outcome: AttemptEndLine,
): void {
  if (writers.journal !== undefined) {
    const { usage: _usage, ...full } = outcome;
    writers.journal({ ...mirrorLlmLine(facts, endedAt), ...full });
  } else if (writers.ledger !== undefined) {
    const { response: _response, ...money } = outcome;
    const { input: _input, ...line } = mirrorLlmLine(facts, endedAt);
    writers.ledger({ ...line, ledgerOnly: true, ...money } as JournalEntry);
  }
}
