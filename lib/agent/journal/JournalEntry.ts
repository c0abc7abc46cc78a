import type { LLMCallInput } from '../AgentEvents';
import type { LLMCallBound, LLMResponse, ToolCall, ToolResult, Usage } from '../AgentLoop';
import type { BoundExceeded } from '../boundExceeded';
import type { CutAtBound } from '../money/cutAtBound';

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
  /**
   * The loop's operation, or the hook whose call through `ctx.llm` this is (`compact`,
   * `runTool`): a hook's line is ledger-only, since the library never sees its request.
   */
  operation: 'sendUserMessage' | 'sendToolResults' | HookOperation;
  /** 1 for the first attempt of the call, 2 for the first retry, …; for a hook, its call's number in the turn. */
  attempt: number;
  startedAt: number;
  endedAt: number;
  /** Absent in a ledger-only line (`ledger: true` without `journal`), which keeps no content. */
  input?: LLMCallInput;
  response?: LLMResponse;
  /** A ledger-only line: the attempt's usage and cost, without its input or response. */
  ledgerOnly?: true;
  /** In a ledger-only line, and in the line of an answer the loop refused (`answeredUsage`): the usage it reported. */
  usage?: Usage;
  /**
   * What the attempt was charged in USD: its response's cost as reported or priced, else its
   * whole hold (see `chargedAtHold`); absent when unknown.
   */
  costUsd?: number;
  /** Why `costUsd` is the attempt's hold (its worst case) and not its price: it may have been billed at an unknown cost (uncertain). */
  chargedAtHold?: string;
  /** Why the attempt's hold was let go, charged nothing: it was provably not billed (never sent, or a failure the provider does not bill). */
  released?: string;
  /** The hold let go, in USD, when one was computed. */
  releasedUsd?: number;
  /**
   * Why the attempt's cost is unknown and in no dollar figure: it may have been billed, and
   * neither a price nor a hold was computed for it (no \`pricing\`, or a model it lacks, with no cap).
   */
  unpriced?: string;
  /** The response used more output tokens than its request's bound allowed: by how much. */
  boundExceeded?: BoundExceeded;
  /** The response stream was cut at its bound (the server did not stop at max tokens): the count when it was. */
  cutAtBound?: CutAtBound;
  error?: JournalError;
  /** Served from the journal of the interrupted run this one resumed: no request was made, it was paid for then. */
  fromJournal?: true;
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
  /** A framework's tool gave a value, not text: `result.output` is its JSON, and a resumed run is served the value. */
  json?: true;
  /** Answered from the journal of the interrupted run this one resumed (its tool policy `replay`): the tool did not run again. */
  fromJournal?: true;
}

/**
 * The money ledger's write-ahead record of one LLM attempt, written (and fsync'ed, by a
 * `JsonlHistorySink`) before the attempt starts: the most it may cost. The `llm` line that
 * follows carries what it did cost; a `reserve` line with no `llm` line after it is a call the
 * provider may have billed, counted at `maxCostUsd`.
 */
export interface ReserveJournalEntry {
  type: 'reserve';
  turn: number;
  /** As in the `llm` line that closes it: a hook's call through `ctx.llm` is reserved as the loop's own are. */
  operation: 'sendUserMessage' | 'sendToolResults' | HookOperation;
  attempt: number;
  /** When the reservation was made (the adapter's clock). */
  at: number;
  /**
   * The call's worst-case cost in USD (from its bound and `pricing`), else the run's
   * `ledgerDefaultMaxCostUsd` (the adapter's or the mirror's); absent when neither is known (see `unknown`).
   */
  maxCostUsd?: number;
  /** The request's bound, when the loop gives one (`llmCallBound`). */
  bound?: LLMCallBound;
  /** `maxCostUsd` is the stated default, not the call's worst case. */
  defaulted?: true;
  /** Why the worst case is unknown, when it is. */
  unknown?: string;
}

/**
 * A person's answer to one tool call that waited for approval, written (and fsync'ed, by a
 * `JsonlHistorySink`; committed, by a store's sink) when the answer is taken, before the tool
 * runs: a run resumed from this journal takes it again instead of asking again, so an answer
 * is taken exactly once across a crash. An approved call without a `tool` line after it may
 * have been running at the cut: the resume's tool policy decides (`resumeTools`).
 */
export interface ApprovalJournalEntry {
  type: 'approval';
  turn: number;
  callId: string;
  /** The call's tool. */
  name: string;
  approved: boolean;
  /** With `approved: false`: why (the model gets `denied: <reason>`). */
  reason?: string;
  /** With `approved: true`: the input a person gave the call to run with (the adapter's `approve(callId, { input })`). */
  input?: unknown;
  /** When the answer was taken (the run's clock). */
  at: number;
  /** Who answered, when the answer says (`agent-sm approve` gives the user's login name). */
  by?: string;
  /** Taken from the journal of the interrupted run this one resumed: nobody was asked again. */
  fromJournal?: true;
  /** Absent: an answer (a question is an `ApprovalAskedJournalEntry`). */
  asked?: undefined;
}

/**
 * A tool call that asked for approval from inside its tool (it started, then stopped for a
 * person's answer: a LangGraph `interrupt()` in a tool), one line a waiting call, written (and
 * fsync'ed, or committed) before the run parks. A resumed run reads it to tell "asked, not yet
 * answered" from "cut off while it ran": the tool runs again to its question, and the run
 * parks again with the same call, instead of the call being answered as interrupted. Its
 * answer, once given, is the `approval` line with `approved`.
 */
export interface ApprovalAskedJournalEntry {
  type: 'approval';
  turn: number;
  callId: string;
  /** The call's tool. */
  name: string;
  /** The input the model gave the call. */
  input?: unknown;
  asked: true;
  /** When the run parked (the run's clock). */
  at: number;
}

/** A hook that may call an LLM through its budgeted handle (`ctx.llm`): the operation its ledger lines name. */
export type HookOperation = 'compact' | 'runTool';

/** A line of the journal: every LLM attempt, tool call, approval question asked in a tool and approval answer of a run, beside its moves. */
export type JournalEntry =
  LlmJournalEntry | ToolJournalEntry | ReserveJournalEntry | ApprovalJournalEntry | ApprovalAskedJournalEntry;

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

/** What an attempt's end adds to its journal (or ledger-only) line, whichever driver wrote it. */
export type AttemptEndLine = Pick<
  LlmJournalEntry,
  | 'response'
  | 'costUsd'
  | 'error'
  | 'usage'
  | 'chargedAtHold'
  | 'released'
  | 'releasedUsd'
  | 'unpriced'
  | 'boundExceeded'
  | 'cutAtBound'
  | 'fromJournal'
>;
