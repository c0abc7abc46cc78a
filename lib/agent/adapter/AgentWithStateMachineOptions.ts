import type { Logger } from 'winston';
import type { BillingRule } from '../money/providerBilling';
import type { StateName } from '../../../states/StateName';
import type { Pricing } from '../AgentLoop';
import type { AgentLogger } from '../AgentLogger';
import type { Budget } from '../money/Budget';
import type { BudgetLimits } from '../BudgetLimits';
import type { ExternalBudget } from '../money/ExternalBudget';
import type { RetryOptions } from '../retry/retryDelay';
import type { Sleep } from '../../internal/sleep';
import type { StateMachineOptions } from '../../machine/StateMachine';
import type { JournalOptions } from '../journal/JournalEntry';
import type { ResumeFrom } from '../journal/RunRecording';
import type { ResumeToolPolicy } from '../journal/ResumeToolPolicy';
import type { OnUnknownCost } from '../money/priceResponse';
import type { ApprovalPolicy } from '../ApprovalGate';
import type { TransitionTable } from '../../machine/TransitionTable';
import type { StallOptions } from '../stall/StallOptions';

/** Options of `new AgentWithStateMachine(loop, options)`: the machine's options plus budgets, retries and cancellation grace. */
export interface AgentWithStateMachineOptions extends Omit<StateMachineOptions<StateName>, 'table' | 'logger'> {
  /**
   * The table the turns run through. Default: the sixteen-state table extended with what the
   * other options need (APPROVAL_EXTENSION for `approve`, COMPACTION_EXTENSION for `compact`,
   * STALL_EXTENSION for `stall`, WRAP_UP_EXTENSION for a `wrapUp`). A table of your own must
   * carry them: the adapter checks here that it has every edge the other options will ask for,
   * and names the extension to add (`extendTable(yourTable, STALL_EXTENSION)`).
   */
  table?: TransitionTable<string>;
  /**
   * Which tool calls wait for a person before they run: tool names mapped to `true`, or a
   * function of the call. A turn with such a call stops in AwaitingApproval and returns
   * outcome `awaiting_approval`; answer with `approve()` / `deny()`, then `continueTurn()`. Brings
   * `APPROVAL_EXTENSION`'s states (a `table` of your own needs them).
   */
  approve?: ApprovalPolicy;
  /** How long a turn waits for approval answers before it ends in ApprovalTimedOut. Default: no limit. */
  approvalTimeoutMs?: number;
  /**
   * Compact the conversation when an LLM call fails because it is longer than the model's
   * context (`isContextOverflow`): the run moves to Compacting, the loop's `compact` operation
   * runs, and the call is made once more. Needs the loop's `compact`; brings
   * `COMPACTION_EXTENSION`'s state (a `table` of your own needs it). Default off.
   */
  compact?: boolean;
  /**
   * Watch for loops that go nowhere — the same tool call with the same input `sameToolCall`
   * times (3), the same text twice in a row, `idleCalls` calls (8) with no new tool call — and
   * your own `detectors`: when one fires after a response that asks for tools, the run moves to
   * Stalled and either nudges the model (one message with the next tool results) or stops,
   * outcome `stalled`. `true` for the defaults (nudge, then stop). Brings `STALL_EXTENSION`'s
   * states (a `table` of your own needs them); with `ledger`, `journal` on too (ledger lines hold no responses). Default off.
   */
  stall?: boolean | StallOptions;
  /**
   * Any logger with `error`, `warn`, `info` and `debug` methods of `(message, meta)` — winston,
   * pino, console — or `false` for none. A logger that throws never changes an outcome.
   * Default: a shared winston logger to stderr at `AGENT_SM_LOG_LEVEL` or `warn`.
   */
  logger?: AgentLogger | Logger | false;
  /** This agent's own limits, over all its turns. `maxWallMs` is a deadline: it aborts the running operation. */
  budget?: BudgetLimits;
  /** Further budgets charged alongside this agent's own, e.g. a batch's shared pool. */
  sharedBudgets?: readonly Budget[];
  /**
   * Budgets kept outside this process (a batch's limits in Redis): `reserve()` is awaited
   * before every LLM call and tool call, `charge()` as usage arrives. A spent limit stops
   * the turn as an in-memory one does; a failing one ends it in Error.
   */
  externalBudgets?: readonly ExternalBudget[];
  /** Retries of a failed LLM call, with exponential backoff, jitter and Retry-After. Default 2 retries from 500 ms. */
  retry?: RetryOptions;
  /** After cancellation, how long a running operation may take to stop before it is abandoned. Default 2,000 ms. */
  cancelGraceMs?: number;
  /** How many tool calls of one response run at once: a positive integer or `Infinity`. Default 1. */
  toolConcurrency?: number;
  /** Computes a response's cost in USD from its tokens when it reports no `costUsd`. */
  pricing?: Pricing;
  /**
   * When `maxCostUsd` is set and a response's cost is unknown (or `maxTokens` is set and it
   * reports no tokens): `'error'` (default) ends the turn in Error; `'warn'` logs once per
   * agent and notes it in the history; `'ignore'` goes on.
   */
  onUnknownCost?: OnUnknownCost;
  /**
   * Which failed requests are not billed, so that their holds are released rather than charged
   * at their worst case: rows in place of the default rows of the same status
   * (`PROVIDER_BILLING`, each with the provider's source). A failure no row marks `released` is
   * uncertain money. Default: the provider rows as they are.
   */
  billing?: readonly BillingRule[];
  /** How the adapter waits (backoff, grace). Tests pass one that does not really wait. */
  sleep?: Sleep;
  /** Source of jitter, [0, 1). Default Math.random. */
  random?: () => number;
  /**
   * Keep a journal of every LLM attempt (its input, and the response as the loop returned it,
   * with its cost, or its error) and every tool call (input and result) beside the moves, in
   * the sink (which must take journal lines: `JsonlHistorySink` does). Each entry is written
   * before the move that follows it. Credential-named fields (`apiKey`, `authorization`,
   * `password`, …) are redacted; `{ redact }` sees every entry after that. Default off.
   */
  journal?: boolean | JournalOptions;
  /**
   * The money ledger without the journal's content: before each LLM attempt a `reserve` line
   * states the most it may cost (written and fsync'ed before the call starts), and an `llm`
   * line after it its usage and cost, with no input or response. On whenever `journal` is
   * (`ledger: false` beside a journal is refused: it could not take effect).
   * Needs a sink that takes journal lines. Default off.
   */
  ledger?: boolean;
  /**
   * The reservation a ledger line states for a call whose worst case is unknown (no
   * `llmCallBound`, or no price for the model), in USD. Without it such a line states no
   * amount, and readers count the call as of unknown cost (never $0).
   */
  ledgerDefaultMaxCostUsd?: number;
  /**
   * Under a strict `maxCostUsd` with little left, a request's max output tokens are lowered to
   * what fits (`ctx.maxOutputTokens`), but never below this: a call that does not fit even
   * with this many output tokens is not made (budget_exceeded). Default 256.
   */
  minOutputTokens?: number;
  /**
   * Resume an interrupted run of this conversation from its journal (`{ journal, usage?, tools? }`,
   * usually from `resumeAgent(file, loop)` or `runBatch`'s `resume`). Run the same turns again
   * (same inputs): each recorded LLM response is handed to the loop's `acceptRecorded` instead
   * of a request, as long as the run asks for the recorded calls, then the run goes live. Tool
   * calls of recorded responses follow `resumeTools` (default: their journaled results are
   * served, the tools not run again). The earlier spend (`usage`) counts in this agent's own usage and
   * budget. A loop without `acceptRecorded` starts from the beginning, its earlier spend still
   * counted. `agent.resumed` says which happened.
   */
  resumeFrom?: ResumeFrom;
  /**
   * With `resumeFrom`: which tool calls of the interrupted run are run again, and which are
   * answered from the journal. Default: all served from it (a tool with effects runs once).
   */
  resumeTools?: ResumeToolPolicy;
}

/** Options of one `runTurn(input, options)` call. */
export interface RunTurnOptions {
  /** Cancels the turn when it aborts, as `cancel()` does. */
  signal?: AbortSignal;
  /** Limits for this turn alone, on top of the agent's own. */
  budget?: BudgetLimits;
}
