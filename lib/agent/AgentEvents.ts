import type { LLMResponse, ToolCall, ToolResult, Usage } from './AgentLoop';
import type { PendingApproval } from './ApprovalGate';
import type { TurnResult } from './TurnResult';

/** The input of one LLM call: the user's message, or tool results with the messages that go with them. */
export type LLMCallInput =
  { kind: 'user_message'; message: string } | { kind: 'tool_results'; results: ToolResult[]; messages: string[] };

/** One LLM attempt, reported when it has ended (successfully or not). Times are the adapter's clock. */
export interface LLMAttemptEvent {
  turn: number;
  operation: 'sendUserMessage' | 'sendToolResults';
  /** 1 for the first attempt, 2 for the first retry, … */
  attempt: number;
  startedAt: number;
  endedAt: number;
  input: LLMCallInput;
  /** The response, when the attempt succeeded. */
  response?: LLMResponse;
  /** What the attempt threw, when it failed. */
  error?: unknown;
  /** Whether the adapter will try again after this failure. */
  willRetry: boolean;
  /** The usage the response reported, with the cost `pricing` computed when it reported none. */
  usage?: Usage;
  /** What the attempt was charged, as which of the three figures (billed, uncertain, released), with why. */
  money?: AttemptMoney;
}

/**
 * An attempt's money as one of the three figures: `billed` (priced from the usage the provider
 * reported), `uncertain` (it may have been billed, no usage came back: charged at its hold, `why`),
 * `released` (provably not billed: its hold let go, `why`), or `unknown` (it may have been billed,
 * and neither a price nor a worst case was computed: counted in usage's `unpricedCalls`, `why`).
 */
export interface AttemptMoney {
  figure: 'billed' | 'uncertain' | 'released' | 'unknown';
  /** USD: billed or uncertain, what was charged; released, the hold let go. */
  usd?: number;
  why?: string;
}

/** One tool call, reported when it has ended, was interrupted, or was never run. */
export interface ToolCallEvent {
  turn: number;
  call: ToolCall;
  /** `ok` and `error`: the tool ran (an error result or a throw is `error`); `interrupted`: cancelled while running; `not_run`: never started. */
  status: 'ok' | 'error' | 'interrupted' | 'not_run';
  startedAt: number;
  endedAt: number;
  /** The result sent (or to be settled) for this call. */
  result: ToolResult;
}

/** Events of `AgentWithStateMachine`, for tracing and metrics; the machine's own events report every move. */
export interface AgentEvents {
  turnStart: [info: { turn: number; input: string; startedAt: number }];
  llmAttempt: [event: LLMAttemptEvent];
  toolCall: [event: ToolCallEvent];
  turnEnd: [info: { turn: number; result: TurnResult; endedAt: number }];
  /** A turn stopped for approval: answer `requests` with `approve` / `deny` (a batch's runs: through `onRun`'s agent). */
  approvalRequested: [info: { turn: number; requests: PendingApproval[] }];
  /** A listener of these events threw; the turn goes on. */
  listenerError: [error: unknown, event: string];
}
