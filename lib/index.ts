// The public API, by name. Anything not listed here is internal.
export { State, STATE_NAMES, UNKNOWN_STATE } from '../states/StateName';
export type { StateName, UnknownState } from '../states/StateName';
export { AgentState } from '../states/AgentState';
export type { StateSpec } from '../states/AgentState';
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

export { TRANSITIONS, DEFAULT_TABLE } from './transitions';
export type { TransitionTable } from './TransitionTable';
export { tableStates, tableEdges } from './TransitionTable';
export { createTable } from './createTable';
export { extendTable } from './extendTable';
export type { TableExtension } from './extendTable';
export { checkTable } from './checkTable';
export type { TableCheck, TableIssue } from './checkTable';
export { assertValidTable } from './assertValidTable';
export { canTransition } from './canTransition';
export { TransitionValidator } from './TransitionValidator';

export { StateMachineError } from './StateMachineError';
export { IllegalTransitionError } from './IllegalTransitionError';
export { UnknownStateError } from './UnknownStateError';
export { InvalidArgumentError } from './InvalidArgumentError';
export { InvalidTableError } from './InvalidTableError';

export { StateMachine } from './StateMachine';
export type { StateMachineOptions, StateMachineEvents, HistorySink, ResetInfo } from './StateMachine';
export type { TransitionRecord, TransitionEvent } from './TransitionRecord';
export { getDefaultLogger, LOG_LEVEL_ENV } from './defaultLogger';
export { formatHistory } from './formatHistory';
export type { FormatHistoryOptions } from './formatHistory';
export { formatDuration } from './formatDuration';

// The adapter: wrap an existing agent loop.
export { AgentWithStateMachine } from './AgentWithStateMachine';
export type { AgentWithStateMachineOptions, RunTurnOptions } from './AgentWithStateMachine';
export type { AgentLoop, LLMResponse, ToolCall, ToolResult, Usage, OperationContext } from './AgentLoop';
export type { TurnResult, TurnOutcome } from './TurnRunner';
export { LLMCallError, ContractViolationError, BudgetExceededError, TurnCancelledError, OperationError, MachineMovedError } from './TurnError';
export type { TurnError } from './TurnError';
export { TurnInProgressError } from './TurnInProgressError';
export { Budget } from './Budget';
export type { BudgetOptions } from './Budget';
export { spentLimit, assertBudgetLimits } from './BudgetLimits';
export type { BudgetLimits, BudgetLimitName, SpentLimit } from './BudgetLimits';
export { emptyUsage, addUsage, totalTokens } from './UsageTotals';
export type { UsageTotals, UsageDelta } from './UsageTotals';
export { retryDelay } from './retryDelay';
export type { RetryOptions } from './retryDelay';
export { sleep } from './sleep';
export type { Sleep } from './sleep';
export { createScriptedAgent } from './createScriptedAgent';
export type { AgentScript, ScriptedReply, ScriptedTool, ScriptedCall, ScriptedAgent } from './createScriptedAgent';

// Inspecting a run after the fact: history files, validation, summaries, diagrams.
export { VERSION } from './version';
export { JsonlHistorySink } from './JsonlHistorySink';
export type { JsonlHistorySinkOptions } from './JsonlHistorySink';
export { readHistory, loadHistory } from './loadHistory';
export type { ReadHistoryOptions, LoadedHistory } from './loadHistory';
export { parseHistoryLine } from './parseHistoryLine';
export type { ParsedHistoryLine } from './parseHistoryLine';
export { isHistoryEntry } from './HistoryEntry';
export type { HistoryEntry, HistoryItem, HistoryMeta, HistoryWarning, RejectedMove, ResetMarker } from './HistoryEntry';
export { toHistoryTableInfo, tableFromHistoryInfo } from './HistoryTableInfo';
export type { HistoryTableInfo } from './HistoryTableInfo';
export { HistoryFileError } from './HistoryFileError';
export type { HistoryFileErrorCode } from './HistoryFileError';
export { validateHistory, HistoryValidator } from './validateHistory';
export type { HistoryIssue, HistoryValidation } from './validateHistory';
export { summarizeHistory, HistorySummarizer } from './summarizeHistory';
export type { HistorySummary, SummarizeHistoryOptions, StateTime, TurnSummary, FailureSummary } from './summarizeHistory';
export { formatSummary } from './formatSummary';
export type { FormatSummaryOptions } from './formatSummary';
export { toMermaid, historyToMermaid, historyToGantt } from './toMermaid';
export type { HistoryDiagramOptions, GanttOptions } from './toMermaid';

// Budget-capped batches: many agent tasks, a concurrency limit, per-run and shared budgets.
export { runBatch, RUN_OUTCOMES } from './runBatch';
export type { BatchTask, BatchOptions, BatchReport, BatchTotals, BatchProgress, RunReport, RunOutcome } from './runBatch';
export { RunSkippedError } from './RunSkippedError';
export type { SkipReason } from './RunSkippedError';
export { formatBatchReport } from './formatBatchReport';
export type { FormatBatchReportOptions } from './formatBatchReport';
