import type { LLMResponse } from '../AgentLoop';
import type { SpentLimit } from '../BudgetLimits';
import type { ContractViolationError, LLMCallError, OperationError } from '../TurnError';

/** One failed attempt, as the record after the call keeps it. */
export interface Attempt {
  attempt: number;
  error: string;
  delayMs?: number;
  retryAfterMs?: number;
  noRetry?: string;
}

/** What a response's record notes beside its usage: malformed usage fields, an unknown cost. */
export interface ResponseNotes {
  usageProblems?: readonly string[];
  unknownCost?: string;
  /** Served from the journal of the interrupted run this one resumed: no request was made. */
  fromJournal?: true;
}

/** How one LLM call (with its retries) ended; the turn makes the move that follows. */
export type LLMOutcome =
  | { kind: 'response'; response: LLMResponse; attempts: number; failures: Attempt[]; notes: ResponseNotes | undefined }
  /** The turn was aborted (cancelled, or its deadline passed); `data` goes in the record. */
  | { kind: 'aborted'; data: Record<string, unknown> }
  /** A budget was spent before an attempt, or a response passed its bound under a strict cap: no further call was made. */
  | { kind: 'budget'; spent: SpentLimit; failures: Attempt[] }
  | { kind: 'failed'; error: LLMCallError | OperationError | ContractViolationError; data: Record<string, unknown> };

export type LLMOperation = 'sendUserMessage' | 'sendToolResults';
