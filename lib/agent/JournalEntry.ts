import type { LLMCallInput } from './AgentEvents';
import type { LLMResponse, ToolCall, ToolResult } from './AgentLoop';

/** An error as the journal keeps it: enough to replay the failure (retry decisions read `status`). */
export interface JournalError {
  name: string;
  message: string;
  /** The HTTP status an SDK error carried. */
  status?: number;
  /** A provider's error code (`rate_limit_exceeded`, `context_length_exceeded`). */
  code?: string;
}

/**
 * One LLM attempt: what it was sent, and the response as the loop returned it (text, tool
 * calls, usage, model, finish reason) with its cost, or the error it failed with. Written
 * before the move that follows the attempt.
 */
export interface LlmJournalEntry {
  type: 'llm';
  turn: number;
  operation: 'sendUserMessage' | 'sendToolResults';
  /** 1 for the first attempt of the call, 2 for the first retry, … */
  attempt: number;
  startedAt: number;
  endedAt: number;
  input: LLMCallInput;
  response?: LLMResponse;
  /** The response's cost in USD, as reported or priced; absent when unknown. */
  costUsd?: number;
  error?: JournalError;
}

/** One tool call: its input and the result sent back for it. Written before the move that follows the tools. */
export interface ToolJournalEntry {
  type: 'tool';
  turn: number;
  call: ToolCall;
  status: 'ok' | 'error' | 'interrupted' | 'not_run';
  startedAt: number;
  endedAt: number;
  result: ToolResult;
}

/** A line of the journal: every LLM attempt and every tool call of a run, beside its moves. */
export type JournalEntry = LlmJournalEntry | ToolJournalEntry;

/** Options of the adapter's `journal`. */
export interface JournalOptions {
  /**
   * Sees each entry before it is written (after the default redaction of credential-named
   * fields) and returns what to write. A redact that throws writes a placeholder that keeps
   * only the entry's kind, turn and times: content it could not clean never reaches the file.
   */
  redact?: (entry: JournalEntry) => JournalEntry;
}

/** The error an attempt failed with, as the journal keeps it. */
export function journalError(error: unknown): JournalError {
  if (typeof error !== 'object' || error === null) return { name: 'Error', message: String(error) };
  const e = error as { name?: unknown; message?: unknown; status?: unknown; statusCode?: unknown; code?: unknown };
  const out: JournalError = {
    name: typeof e.name === 'string' ? e.name : 'Error',
    message: typeof e.message === 'string' ? e.message : String(error),
  };
  const status = typeof e.status === 'number' ? e.status : typeof e.statusCode === 'number' ? e.statusCode : undefined;
  if (status !== undefined) out.status = status;
  if (typeof e.code === 'string') out.code = e.code;
  return out;
}
