/**
 * The main entry: the sixteen states, the machine, `AgentWithStateMachine`, batches, history files
 * and their reports. Anything not exported here is internal.
 *
 * @module agent-state-machine
 */
export { State, STATE_NAMES, UNKNOWN_STATE } from '../states/StateName';
export type { StateName, UnknownState } from '../states/StateName';
export { AgentState } from '../states/AgentState';
export type { StateSpec, StateActivity } from '../states/AgentState';
export { ReadyState } from '../states/ReadyState';
export { WaitingForUserInputState } from '../states/WaitingForUserInputState';
export { SendingToLLMState } from '../states/SendingToLLMState';
export { ProcessingLLMResponseState } from '../states/ProcessingLLMResponseState';
export { EndOfTurnState } from '../states/EndOfTurnState';
export { ToolUseRequestedState } from '../states/ToolUseRequestedState';
export { CheckingForCancellationState } from '../states/CheckingForCancellationState';
export { RunningToolState } from '../states/RunningToolState';
export { CheckingGitCommitsState } from '../states/CheckingGitCommitsState';
export { RunningAutoformattersState } from '../states/RunningAutoformattersState';
export { CheckingBudgetState } from '../states/CheckingBudgetState';
export { GatheringAdditionalMessagesState } from '../states/GatheringAdditionalMessagesState';
export { SendingToolResultsState } from '../states/SendingToolResultsState';
export { CancelledState } from '../states/CancelledState';
export { BudgetExceededState } from '../states/BudgetExceededState';
export { ErrorState } from '../states/ErrorState';
export { STATES } from '../states/registry';

export { TRANSITIONS, DEFAULT_TABLE } from './machine/transitions';
export type { TransitionTable } from './machine/TransitionTable';
export { tableStates, tableEdges } from './machine/TransitionTable';
export { createTable } from './machine/createTable';
export { extendTable } from './machine/extendTable';
export type { TableExtension } from './machine/extendTable';
export { checkTable } from './machine/checkTable';
export type { TableCheck, TableIssue } from './machine/checkTable';
export { assertValidTable } from './machine/assertValidTable';
export { canTransition } from './machine/canTransition';
export { TransitionValidator } from './machine/TransitionValidator';

export { StateMachineError } from './machine/StateMachineError';
export { IllegalTransitionError } from './machine/IllegalTransitionError';
export { UnknownStateError } from './machine/UnknownStateError';
export { InvalidArgumentError } from './machine/InvalidArgumentError';
export { UnknownOptionError } from './machine/UnknownOptionError';
export { assertKnownOptions } from './machine/assertKnownOptions';
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
export { formatConversation } from './history/formatConversation';
export type { FormatConversationOptions } from './history/formatConversation';
export { formatDuration } from './internal/formatDuration';

// The adapter: wrap an existing agent loop.
export { AgentWithStateMachine } from './agent/AgentWithStateMachine';
export type { AgentWithStateMachineOptions, RunTurnOptions } from './agent/AgentWithStateMachine';
// The mirror: a loop a framework owns, fed step by step into the same states, history and budgets.
export { StepMirror } from './agent/StepMirror';
export type { StepMirrorOptions, MirrorResponse, MirrorToolOutcome, MirrorStop } from './agent/StepMirror';
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
} from './agent/AgentLoop';
export { worstCaseCost } from './agent/worstCaseCost';
export type { WorstCase } from './agent/worstCaseCost';
export { USAGE_BOUNDS } from './internal/usageBounds';
export type { AgentEvents, LLMAttemptEvent, ToolCallEvent, LLMCallInput } from './agent/AgentEvents';
export type { ExternalBudget } from './agent/ExternalBudget';
export type { TurnOutcome, TurnStop } from './agent/TurnOutcome';
export {
  APPROVAL_EXTENSION,
  COMPACTION_EXTENSION,
  STALL_EXTENSION,
  WRAP_UP_EXTENSION,
  ExtensionState,
} from './agent/extensionStates';
export { DEFAULT_WRAP_UP_INSTRUCTION } from './agent/BudgetEndings';
export type { BudgetEndings, WrapUpOption } from './agent/BudgetEndings';
export type { ExtensionStateName } from './agent/extensionStates';
export { sameToolCall, repeatedText, idleCalls } from './agent/stallDetectors';
export type { StallDetector, StallFinding } from './agent/stallDetectors';
export type { StallOptions, StallPolicy } from './agent/StallOptions';
export { findStalls } from './agent/findStalls';
export type { StallSighting } from './agent/findStalls';
export type { ApprovalPolicy, ApprovalDecision, PendingApproval } from './agent/ApprovalGate';
export { isContextOverflow } from './agent/isContextOverflow';
export { priceResponse, priceUsage } from './agent/priceResponse';
export type { OnUnknownCost, PricePolicy, PricedResponse } from './agent/priceResponse';
export type { TurnResult, UnansweredToolCall } from './agent/TurnResult';
export type { AgentLogger } from './agent/AgentLogger';
export { defaultShouldRetry, retryAfterMs } from './agent/retryAfter';
export { StreamCutError, watchOutputBound, estimateOutputTokens, cutAtBoundOf } from './agent/cutAtBound';
export type { CutAtBound, OutputBoundWatch } from './agent/cutAtBound';
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
export { Budget } from './agent/Budget';
export type { BudgetOptions } from './agent/Budget';
export { UsageMeter } from './agent/UsageMeter';
export type {
  JournalEntry,
  LlmJournalEntry,
  ToolJournalEntry,
  ReserveJournalEntry,
  HookOperation,
  JournalOptions,
  JournalError,
} from './agent/JournalEntry';
export { redactCredentials } from './agent/redactCredentials';
export type { UsageMeterOptions } from './agent/UsageMeter';
export { assertBudgetLimits } from './agent/BudgetLimits';
export type { BudgetLimits, BudgetLimitName, SpentLimit } from './agent/BudgetLimits';
export { assertBoundsCalls } from './agent/assertBoundsCalls';
export { UnboundedCallsError } from './agent/UnboundedCallsError';
export { emptyUsage, addUsage } from './agent/UsageTotals';
export type { UsageTotals, UsageDelta } from './agent/UsageTotals';
export type { RetryOptions } from './agent/retryDelay';
export type { Sleep } from './internal/sleep';
export { createScriptedAgent } from './agent/createScriptedAgent';
export type {
  AgentScript,
  ScriptedReply,
  ScriptedTool,
  ScriptedCall,
  ScriptedAgent,
} from './agent/createScriptedAgent';

// Inspecting a run after the fact: history files, validation, summaries, run facts, diagrams.
export { VERSION } from './internal/version';
export { JsonlHistorySink } from './history/JsonlHistorySink';
export type { JsonlHistorySinkOptions, HistoryDurability } from './history/JsonlHistorySinkOptions';
export { readHistory, loadHistory } from './history/loadHistory';
export type { ReadHistoryOptions, LoadedHistory } from './history/loadHistory';
export { RunLinesSink } from './history/RunLinesSink';
export type { RunLineWriter } from './history/RunLinesSink';
export { readRunFile } from './history/readRunFile';
export type { RunFileFacts } from './history/readRunFile';
export type {
  HistoryEntry,
  HistoryItem,
  HistoryMeta,
  HistoryWarning,
  HttpExchangeLine,
  JournalLineRead,
  RejectedMove,
  ResetMarker,
} from './history/HistoryEntry';
export type { HistoryTableInfo } from './history/HistoryTableInfo';
export { HistoryFileError } from './history/HistoryFileError';
export type { HistoryFileErrorCode } from './history/HistoryFileError';
export { validateHistory, HistoryValidator } from './history/validateHistory';
export type { HistoryIssue, HistoryValidation } from './history/validateHistory';
export { summarizeHistory, HistorySummarizer } from './history/summarizeHistory';
export type {
  HistorySummary,
  SummarizeHistoryOptions,
  StateTime,
  TurnSummary,
  FailureSummary,
} from './history/summarizeHistory';
export type { StallNote } from './history/stallNoteOf';
export { runFacts, RunFactsCollector } from './history/runFacts';
export type {
  RunFacts,
  RunFactsOptions,
  TurnFacts,
  FailingMove,
  RunUsage,
  UsagePoint,
  RunSpend,
} from './history/runFacts';
export { formatSummary } from './history/formatSummary';
export type { FormatSummaryOptions } from './history/formatSummary';
export { toMermaid, historyToMermaid, historyToGantt, RunDiagram } from './history/toMermaid';
export type { HistoryDiagramOptions, GanttOptions } from './history/toMermaid';

// Budget-capped batches: many agent tasks, a concurrency limit, per-run and shared budgets.
export { replayLoop } from './replay/replayLoop';
export type { ReplayedLoop } from './replay/replayLoop';
export { replayRun } from './replay/replayRun';
export type { ReplayReport, ReplayRunOptions, ReplayedMove } from './replay/replayRun';
export { ReplayDivergedError } from './replay/ReplayDivergedError';
export { resumeAgent } from './replay/resumeAgent';
export type { ResumeAgentOptions, ResumedAgent } from './replay/resumeAgent';
export type { ResumeFrom, ResumeInfo, RecordedLine } from './agent/RunRecording';
export type { ResumeToolChoice, ResumeToolPolicy } from './agent/ResumeToolPolicy';
export { recordFetch } from './replay/recordFetch';
export type { RecordFetchOptions, RecordingFetch, FetchFunction, HttpExchange } from './replay/recordFetch';
export { replayFetch } from './replay/replayFetch';
export type { ReplayingFetch } from './replay/replayFetch';
export { resumeAwaitingApproval } from './replay/resumeAwaitingApproval';
export type { ResumedApproval } from './replay/resumeAwaitingApproval';
export { runBatch } from './batch/runBatch';
export { runTask } from './batch/runTask';
export { safeFileName } from './batch/safeFileName';
export { lockFolder, FolderLockedError, LOCK_FILE } from './batch/lockFolder';
export type { FolderLock, FolderOwner } from './batch/lockFolder';
export type { RunStore, StoreBatch, StoreBatchOptions, RunSink, StoredRun, StoredRunQuery } from './batch/RunStore';
export type { BatchManifest } from './batch/batchManifest';
export type { AgentTask, AgentSource, RunTaskOptions, TaskRun } from './batch/runTask';
export type { FrameworkTask, FrameworkRun } from './batch/runFrameworkTask';
export type { ApprovalWait, BatchApprovalRequest, CapWait } from './batch/ParkedRuns';
export type { BatchPause, CapRaise } from './batch/CapRaises';
export type { BatchTotal } from './batch/BatchTotal';
export { requestRaise } from './batch/raiseRequests';
export type { RaiseRequest } from './batch/raiseRequests';
export { Deadline } from './agent/Deadline';
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

// HTML reports: one self-contained page per run or per batch (`agent-sm report`).
export { renderRunPage } from './report/renderRunPage';
export type { RunPageOptions } from './report/renderRunPage';
export { renderBatchPage } from './report/renderBatchPage';
export type { BatchPageRun, BatchPageOptions } from './report/renderBatchPage';
export { buildHtmlReport } from './report/buildHtmlReport';
export type { BuildHtmlReportOptions, HtmlReport } from './report/buildHtmlReport';

// A run's history as OpenTelemetry spans (OTLP/JSON), for a tracing tool: `agent-sm export otlp`.
export { historyToOtlp } from './telemetry/historyToOtlp';
export { OtlpSpanStream, MAX_SPAN_EVENTS } from './telemetry/OtlpSpanStream';
export type { HistoryToOtlpOptions } from './telemetry/historyToOtlp';
export type { OtlpTraceExport, OtlpResourceSpans, OtlpSpan, OtlpKeyValue, OtlpAnyValue } from './telemetry/OtlpJson';
