import type { HistoryTableInfo } from './HistoryTableInfo';
import type { TransitionRecord } from '../machine/TransitionRecord';
import type { TransitionTable } from '../machine/TransitionTable';

/**
 * The optional first line of a history file: which code wrote it, for which run, when, and
 * against which table, so the file can be checked and read with nothing else at hand.
 */
export interface HistoryMeta {
  readonly type: 'meta';
  /** The agent-state-machine version that wrote the file. */
  readonly version: string;
  readonly runId: string;
  /** When the file was opened, epoch milliseconds. */
  readonly startedAt: number;
  readonly table: HistoryTableInfo;
  /** Whatever the caller attached when opening the sink (task id, model, host). */
  readonly metadata?: unknown;
}

/** A move the table rejected, as a history line; the machine did not change. */
export interface RejectedMove {
  readonly type: 'rejected';
  readonly from: string;
  readonly to: string;
  readonly allowed: readonly string[];
  readonly description: string;
  readonly at: number;
  /** The seq of the last record written before it (0 before the first), to place it in the run. */
  readonly seq: number;
}

/** The machine was reset: the next record's `from` is the table's initial state. */
export interface ResetMarker {
  readonly type: 'reset';
  /** The state the machine left. */
  readonly from: string;
  readonly at: number;
  /** The seq of the last record before the reset. */
  readonly seq: number;
}

/**
 * A journal line: one LLM attempt (`llm`) or one tool call (`tool`) that an adapter with
 * `journal` on wrote beside the moves, after the record `seq`, or the money ledger's
 * write-ahead reservation of an LLM attempt (`reserve`, with `journal` or `ledger` on). The
 * fields every reader can rely on are checked; the content (input, response, result) is kept
 * as written.
 */
export interface JournalLineRead {
  readonly type: 'llm' | 'tool' | 'reserve' | 'approval';
  /** The seq of the last record written before it (0 before the first). */
  readonly seq: number;
  readonly turn: number;
  /** `llm` and `tool` lines (a `reserve` line has `at`). */
  readonly startedAt?: number;
  /** `llm` and `tool` lines. */
  readonly endedAt?: number;
  /** `reserve`: when the reservation was made; `approval`: when the answer was taken. */
  readonly at?: number;
  /** `reserve`: the most the attempt may cost in USD, when known (or the stated default); `llm`: what it cost, when known. */
  readonly maxCostUsd?: number;
  /** `llm`: the attempt's cost in USD, when known. */
  readonly costUsd?: number;
  /** `llm`, `reserve`: `sendUserMessage` or `sendToolResults`. */
  readonly operation?: string;
  /** `llm`, `reserve`: 1 for the first attempt of the call. */
  readonly attempt?: number;
  /** `tool`: the call, with its id and name. */
  readonly call?: { readonly id: string; readonly name: string; readonly input?: unknown };
  /** `tool`: how it ended. */
  readonly status?: string;
  /** `approval`: the call answered. */
  readonly callId?: string;
  /** `approval`: the call's tool. */
  readonly name?: string;
  /** `approval`: approved, or denied (with `reason`); absent on a question (`asked`). */
  readonly approved?: boolean;
  /** `approval`: the call's tool asked for approval inside itself, not answered by this line (the answer is a line of its own). */
  readonly asked?: true;
  /** `approval`: why it was denied. */
  readonly reason?: string;
  /** `approval`: who answered, when known. */
  readonly by?: string;
  readonly [field: string]: unknown;
}

/**
 * One HTTP exchange with an LLM provider, as `recordFetch` wrote it (a line marked
 * `type: 'http'`), after the record `seq`: the request (method, path, query, body) and the
 * response (status, the headers that matter, the body as text, a streamed one whole). Request
 * headers are never written: they carry the credentials.
 */
export interface HttpExchangeLine {
  readonly type: 'http';
  /** The seq of the last record written before it (0 before the first, and in a file of exchanges alone). */
  readonly seq: number;
  /** 1 for the first request the recording fetch sent, in the order they were sent. */
  readonly call: number;
  readonly startedAt: number;
  readonly endedAt: number;
  readonly request: {
    readonly method: string;
    /** The URL's path, without the origin (a replay may use another base URL). */
    readonly path: string;
    /** The URL's query parameters, credential-named ones redacted. */
    readonly query?: Readonly<Record<string, string>>;
    /** The body: parsed when it is JSON, else its text. */
    readonly body?: unknown;
  };
  /** Absent when the request failed before an answer (`error` says why). */
  readonly response?: {
    readonly status: number;
    readonly headers: Readonly<Record<string, string>>;
    /** The whole body as text (a server-sent event stream too). */
    readonly body: string;
  };
  /** The request failed, or the response's body broke off (then `response.body` holds what came). */
  readonly error?: { readonly name: string; readonly message: string };
}

/** One line of a history file, parsed, with its 1-based line number. */
export type HistoryEntry =
  | {
      readonly kind: 'meta';
      readonly line: number;
      readonly meta: HistoryMeta;
      readonly table: TransitionTable<string>;
    }
  | { readonly kind: 'record'; readonly line: number; readonly record: TransitionRecord<string> }
  | { readonly kind: 'rejected'; readonly line: number; readonly rejected: RejectedMove }
  | { readonly kind: 'reset'; readonly line: number; readonly reset: ResetMarker }
  | { readonly kind: 'journal'; readonly line: number; readonly journal: JournalLineRead }
  | { readonly kind: 'http'; readonly line: number; readonly exchange: HttpExchangeLine };

/**
 * What the analysis functions accept: entries read from a file (which know their line, and
 * carry rejected moves and resets) or plain records, such as `machine.history()`.
 */
export type HistoryItem = TransitionRecord<string> | HistoryEntry;

/** Something odd in a file that did not stop it from being read. */
export interface HistoryWarning {
  /**
   * `cut_last_line`: the last line is incomplete, as a crash while writing leaves it; it was skipped.
   * `skipped_line`: a corrupt line that `salvage` skipped (glued, NUL bytes, too long).
   */
  readonly code: 'cut_last_line' | 'skipped_line';
  readonly file: string;
  readonly line: number;
  readonly message: string;
}

/** Whether an item is a parsed file line rather than a bare record. */
export function isHistoryEntry(item: HistoryItem): item is HistoryEntry {
  return (item as { kind?: unknown }).kind !== undefined;
}
