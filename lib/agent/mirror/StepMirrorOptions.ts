import type { Logger } from 'winston';
import type { BillingRule } from '../money/providerBilling';
import type { StateName } from '../../../states/StateName';
import type { StateMachineOptions } from '../../machine/StateMachine';
import type { AgentLogger } from '../AgentLogger';
import type { LoopHonours, Pricing } from '../AgentLoop';
import type { ApprovalPolicy } from '../ApprovalGate';
import type { Budget } from '../money/Budget';
import type { BudgetLimits } from '../BudgetLimits';
import type { ExternalBudget } from '../money/ExternalBudget';
import type { JournalOptions } from '../journal/JournalEntry';
import type { OnUnknownCost } from '../money/priceResponse';
import type { ResumeFrom } from '../journal/RunRecording';
import type { ResumeToolPolicy } from '../journal/ResumeToolPolicy';
import type { StallOptions } from '../stall/StallOptions';
import type { UsageDelta } from '../UsageTotals';

/** Options of `new StepMirror(options)`: the machine's options plus budgets, pricing, journal and a signal. */
export interface StepMirrorOptions extends Omit<StateMachineOptions<StateName>, 'table' | 'logger'> {
  /** Any logger with `error`, `warn`, `info` and `debug` methods, or `false` for none. Default: the library's shared one. */
  logger?: AgentLogger | Logger | false;
  /** The mirror's own limits, over all its runs. `maxWallMs` is a deadline: it aborts `signal`. */
  budget?: BudgetLimits;
  /** Further budgets charged alongside, e.g. a batch's shared pool. */
  sharedBudgets?: readonly Budget[];
  /**
   * Budgets outside this process (a batch's limits in Redis): reserved before every model call
   * and tool call. Their `endings` (a batch's `total.wrapUp`, `total.visible`) count as a
   * budget's do; beside a `wrapUp`, a dollar cap among them must keep final-call holds (`holdsWrapUp`).
   */
  externalBudgets?: readonly ExternalBudget[];
  /** Computes a response's cost in USD from its tokens when it reports none. */
  pricing?: Pricing;
  /** When a dollar (or token) cap is set and a response's cost is unknown. Default `'error'`: the run ends in Error. */
  onUnknownCost?: OnUnknownCost;
  /**
   * Which failed requests are not billed, so that their holds are released rather than charged
   * at their worst case: rows in place of the default rows of the same status
   * (`PROVIDER_BILLING`, each with the provider's source). A failure no row marks `released` is
   * uncertain money. Default: the provider rows as they are.
   */
  billing?: readonly BillingRule[];
  /** Journal every model attempt and tool call beside the moves (the sink must take journal lines). Default off. */
  journal?: boolean | JournalOptions;
  /** Cancels the running run (and every later one) when it aborts, as `cancel()` does. */
  signal?: AbortSignal;
  /**
   * What an earlier, cut-off attempt of the first run spent (a batch's `resume` gives it): that run
   * starts again from the beginning with this counted in its own usage, its `budget` and its
   * file, so that per-run caps and a later resume see both attempts. Shared and external budgets
   * are not charged again: they start from the files' spend.
   */
  earlierSpend?: UsageDelta;
  /**
   * A cut-off attempt of the first run (a batch's `resume` gives it): the run goes on from its
   * journal, as the adapter's does, where the integration asks `recordedResponse()` and
   * `recordedTool(call)`; one that asks neither restarts, its earlier spend counted.
   */
  resumeFrom?: ResumeFrom;
  /**
   * With `resumeFrom`: which tool calls of the interrupted run are run again (`recordedTool`
   * answers undefined), and which are answered from the journal. Default: all served from it.
   */
  resumeTools?: ResumeToolPolicy;
  /**
   * The money ledger without the journal's content, as the adapter keeps it: a `reserve` line
   * (the attempt's worst case, from the bound given to `modelCallStart`) forced to the disk before
   * each model call, and its cost after. Default off; the sink must take journal lines.
   */
  ledger?: boolean;
  /**
   * The reservation a ledger line states for a call whose worst case is unknown (no bound given
   * to `modelCallStart`, or no price for the model), in USD, as `AgentWithStateMachine` takes
   * it. Without it such a line states no amount, and readers count the call as of unknown cost
   * (never $0).
   */
  ledgerDefaultMaxCostUsd?: number;
  /**
   * Stop a run that goes nowhere, as the adapter's `stall` does (the machine's table gains
   * STALL_EXTENSION: open the sink with it). The policy is `stop`: a framework's loop cannot be nudged.
   */
  stall?: boolean | StallOptions;
  /**
   * The framework's own tool approvals park the run (`awaitApproval`): the table gains the
   * approval states (AwaitingApproval, ApprovalTimedOut; open the sink with it). mirrorAISDK
   * sets it when a tool has `needsApproval`; a batch's mirror has it. Default false.
   */
  approvals?: boolean;
  /**
   * Which of the framework's tool calls wait for a person, as the adapter's `approve`: the
   * integration puts it on the tools it wraps (an AI SDK or Agents SDK tool's `needsApproval`, an
   * `interrupt()` before a LangGraph tool runs), beside the framework's own approvals. A call it
   * names that the framework runs without asking ends the run in Error, not run. Needs
   * `approvals` (its default then).
   */
  approve?: ApprovalPolicy;
  /**
   * With `approvals`: a wait with no answer to every call within this many milliseconds ends
   * the run in ApprovalTimedOut (outcome `cancelled`), its unanswered calls not run, as the
   * adapter's `approvalTimeoutMs`. Default: the run waits for its answers (or its abort).
   */
  approvalTimeoutMs?: number;
  /**
   * The request flags the integration driving this mirror honours, as a loop's `honours`:
   * `wrapUp` (it makes the final call `modelCallPlan` asks for: `budget.wrapUp`) and
   * `budgetNote` (it adds the note: `budget.visible`). A budget asking for one not honoured is
   * refused by name. For `new StepMirror()` alone: an integration (mirrorAISDK honours both,
   * AgentsMirror and LangGraphMirror neither) says its own and refuses one given to it; a batch's
   * mirror honours both until the integration put on it says otherwise. Default: none.
   */
  honours?: LoopHonours;
  /**
   * The mirror mirrors one run, as a batch task's does: once it has ended, a model call is
   * refused with how it ended (the framework's loop that calls again gets the run's
   * `BudgetExceededError`, …) instead of starting another run. Default: false, a model call
   * after an end starts the next run.
   */
  singleRun?: boolean;
}
