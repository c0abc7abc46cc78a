/**
 * The main entry: the machine and its table, `AgentWithStateMachine` and the loop contract,
 * budgets, `runBatch`, and the errors a turn or a run can end with. History files are
 * `agent-state-machine/history`; replay and resume `/replay`; the rest of batches `/batch`;
 * pages and diagrams `/report`. Anything exported nowhere is internal.
 *
 * @module agent-state-machine
 */
export type { StateName, UnknownState } from '../states/StateName';
export type { StateSpec, StateActivity } from '../states/AgentState';

// The table: `DEFAULT_TABLE` is the one form of it; `extendTable` adds states and edges.
export { DEFAULT_TABLE } from './machine/transitions';
export type { TransitionTable } from './machine/TransitionTable';
export { extendTable } from './machine/extendTable';
export type { TableExtension } from './machine/extendTable';
export type { TableIssue } from './machine/checkTable';

export { StateMachineError } from './machine/StateMachineError';
export { IllegalTransitionError } from './machine/IllegalTransitionError';
export { UnknownStateError } from './machine/UnknownStateError';
export { InvalidArgumentError } from './machine/InvalidArgumentError';
export { UnknownOptionError } from './machine/UnknownOptionError';
export { InvalidTableError } from './machine/InvalidTableError';

export { StateMachine } from './machine/StateMachine';
export type {
  StateMachineOptions,
  StateMachineEvents,
  HistorySink,
  JournalLine,
  ResetInfo,
} from './machine/StateMachine';
export type { TransitionRecord, TransitionEvent, ForcedLogLevel } from './machine/TransitionRecord';
export { formatHistory } from './history/formatHistory';
export type { FormatHistoryOptions } from './history/formatHistory';

// The adapter: wrap an existing agent loop.
export { AgentWithStateMachine } from './agent/AgentWithStateMachine';
export type { AgentWithStateMachineOptions, RunTurnOptions } from './agent/AgentWithStateMachine';
// The mirror: a loop a framework owns, fed step by step into the same states, history and budgets.
export { StepMirror } from './agent/StepMirror';
export type { StepMirrorOptions, MirrorCallFlags, MirrorBoundOf } from './agent/StepMirror';
export type { MirrorResponse, MirrorToolOutcome } from './agent/mirror/MirrorOutcomes';
export type { MirrorStop } from './agent/mirror/MirrorStop';
export type { MirrorIntegration } from './agent/mirror/mirrorEndings';
export type { MirroredModelCall, MirroredModelStart } from './agent/mirror/mirrorModel';
export type { MirroredModelStream } from './agent/mirror/mirrorModelStream';
export type { MirroredTool, RecordedToolAnswer } from './agent/mirror/mirrorTool';
export type { MirrorApprovals, ApprovalListener } from './agent/mirror/MirrorApprovals';
// Your own loop, as it is: its LLM calls seen at the wire (a provider subpath's metered fetch), its tool calls marked.
export { observeLoop } from './observe/observeLoop';
export type { ObservedResult } from './observe/observeLoop';
export { observeTool, RecordedToolError } from './observe/observeTool';
export { observeTask } from './observe/observeTask';
export type { ObservedTask } from './observe/observeTask';
export { meterFetch } from './observe/meterFetch';
export type { FetchLike } from './observe/meterFetch';
export type { WireFormat } from './observe/WireFormat';
export { WireError } from './observe/WireError';
export type {
  AgentLoop,
  LLMResponse,
  ToolCall,
  ToolResult,
  Usage,
  OperationContext,
  SettleInfo,
  CompactInfo,
  CompactResult,
  HookContext,
  ToolContext,
  BudgetedLLM,
  BudgetedCallContext,
  Pricing,
  LLMCall,
  LLMCallBound,
  LoopHonours,
  ServerToolUses,
} from './agent/AgentLoop';
export type { AgentEvents, AttemptMoney, LLMAttemptEvent, ToolCallEvent, LLMCallInput } from './agent/AgentEvents';
export type { ExternalBudget } from './agent/money/ExternalBudget';
export type { TurnOutcome, TurnStop } from './agent/TurnOutcome';
export { APPROVAL_EXTENSION, COMPACTION_EXTENSION, STALL_EXTENSION, WRAP_UP_EXTENSION } from './agent/extensionStates';
export type { BudgetEndings, WrapUpOption } from './agent/BudgetEndings';
export type { ExtensionStateName } from './agent/extensionStates';
export { sameToolCall, repeatedText, idleCalls } from './agent/stall/stallDetectors';
export type { StallDetector, StallFinding } from './agent/stall/stallDetectors';
export type { StallOptions, StallPolicy } from './agent/stall/StallOptions';
export type { ApprovalPolicy, ApprovalDecision, PendingApproval } from './agent/ApprovalGate';
export { isContextOverflow } from './agent/retry/isContextOverflow';
export type { OnUnknownCost, PricePolicy, PricedResponse } from './agent/money/priceResponse';
export { PROVIDER_BILLING, billingRules } from './agent/money/providerBilling';
export type { BillingRule, FailureBilling } from './agent/money/providerBilling';
export type { TurnResult, UnansweredToolCall } from './agent/TurnResult';
export type { AgentLogger } from './agent/AgentLogger';
export { defaultShouldRetry, retryAfterMs } from './agent/retry/retryAfter';
export { StreamCutError, watchOutputBound } from './agent/money/cutAtBound';
export type { CutAtBound, OutputBoundWatch } from './agent/money/cutAtBound';
export {
  LLMCallError,
  ContractViolationError,
  BudgetExceededError,
  TurnCancelledError,
  OperationError,
  MachineMovedError,
  StalledError,
} from './agent/TurnError';
export type { TurnError } from './agent/TurnError';
export { TurnInProgressError } from './agent/TurnInProgressError';
export { Budget } from './agent/money/Budget';
export type { BudgetOptions } from './agent/money/Budget';
export type {
  JournalEntry,
  LlmJournalEntry,
  ToolJournalEntry,
  ReserveJournalEntry,
  ApprovalJournalEntry,
  ApprovalAskedJournalEntry,
  HookOperation,
  JournalOptions,
  JournalError,
} from './agent/journal/JournalEntry';
export type { BudgetLimits, BudgetLimitName, SpentLimit } from './agent/BudgetLimits';
export { UnboundedCallsError } from './agent/UnboundedCallsError';
export type { UsageTotals, UsageDelta } from './agent/UsageTotals';
export type { RetryOptions } from './agent/retry/retryDelay';
export type { Sleep } from './internal/sleep';
export { createScriptedAgent } from './agent/createScriptedAgent';
export type {
  AgentScript,
  ScriptedReply,
  ScriptedTool,
  ScriptedCall,
  ScriptedAgent,
} from './agent/createScriptedAgent';
export { VERSION } from './internal/version';

// Budget-capped batches: many agent tasks, a concurrency limit, per-run and shared budgets.
export type { ResumeFrom, ResumeInfo, RecordedLine } from './agent/journal/RunRecording';
export type { ResumeToolChoice, ResumeToolPolicy } from './agent/journal/ResumeToolPolicy';
export { runBatch } from './batch/runBatch';
export type { AgentTask, AgentSource } from './batch/tasks/runTask';
export type { FrameworkTask, FrameworkDriver } from './batch/tasks/runFrameworkTask';
export type { ApprovalWait, BatchApprovalRequest, CapWait } from './batch/approvals/ParkedRuns';
export type { BatchPause, CapRaise } from './batch/raises/CapRaises';
export type { BatchTotal } from './batch/BatchTotal';
export type {
  BatchTask,
  BatchOptions,
  BatchReport,
  BatchTotals,
  BatchProgress,
  RunReport,
  RunOutcome,
} from './batch/runBatch';
export { RunSkippedError } from './batch/RunSkippedError';
export type { SkipReason } from './batch/RunSkippedError';
export { formatBatchReport } from './batch/formatBatchReport';
export type { FormatBatchReportOptions } from './batch/formatBatchReport';
