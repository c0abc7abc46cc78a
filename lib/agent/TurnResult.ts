import type { ToolCall, ToolResult } from './AgentLoop';
import type { PendingApproval } from './ApprovalGate';
import type { SpentLimit } from './BudgetLimits';
import type { OperationError, TurnError } from './TurnError';
import type { TurnStop } from './TurnOutcome';
import type { UsageTotals } from './UsageTotals';

/** A tool call the LLM asked for whose result never reached it, with the result that answers it. */
export interface UnansweredToolCall {
  call: ToolCall;
  /** The tool's real result if it finished, else `isError: true` with `interrupted: …` or `not run: …`. */
  result: ToolResult;
}

/** How a turn ended. `usage` is this turn's own; the adapter's `usage` has the totals. */
export interface TurnResult {
  /**
   * How the turn ended, or `awaiting_approval`: it waits for answers (see `pendingApprovals`),
   * or `awaiting_budget`: it waits for a raise of a pausing shared cap (see `awaitingBudget`).
   */
  outcome: TurnStop;
  /** The final text, for `end_of_turn`. */
  text?: string;
  /** Text the LLM sent alongside tool calls during the turn, in order (absent when there was none). */
  texts?: string[];
  /** Why the turn did not end normally. */
  error?: TurnError;
  usage: UsageTotals;
  /** 1 for the adapter's first turn. */
  turn: number;
  /** Moves the machine made during this turn. */
  transitions: number;
  /**
   * Tool calls of this turn the LLM never got results for, when the agent has no
   * `settleToolCalls` (or it failed): add these results to your conversation before the
   * next turn, or the provider rejects it.
   */
  unansweredToolCalls?: UnansweredToolCall[];
  /**
   * With outcome `awaiting_approval`: the tool calls waiting for `approve(callId)` or
   * `deny(callId, reason)`. The turn goes on once each has its answer; `continueTurn()` gives its result.
   */
  pendingApprovals?: PendingApproval[];
  /**
   * With outcome `awaiting_budget`: the pausing shared cap that refused the turn's next LLM call
   * (before it was sent). Raise that budget, then `retryBudget()`; `continueTurn()` gives the result.
   */
  awaitingBudget?: SpentLimit;
  /** `settleToolCalls` failed (or did not finish within the grace); the outcome stands. */
  settleError?: OperationError;
}
