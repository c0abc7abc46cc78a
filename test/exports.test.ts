import { listExports, readmeApiReference, renderApiReference } from './helpers/apiReference';

// Every entry point's exports, pinned: adding or dropping one is a decision made here, in
// the README's API reference (generated) and in review — never a side effect.
const PINNED: Record<string, string[]> = {
  '.': [
    'AgentEvents', 'AgentLogger', 'AgentLoop', 'AgentScript', 'AgentSource', 'AgentState',
    'AgentTask', 'AgentWithStateMachine', 'AgentWithStateMachineOptions', 'BatchOptions',
    'BatchPageOptions', 'BatchPageRun', 'BatchProgress', 'BatchReport', 'BatchTask', 'BatchTotals',
    'Budget', 'BudgetExceededError', 'BudgetExceededState', 'BudgetLimitName', 'BudgetLimits',
    'BudgetOptions', 'BuildHtmlReportOptions', 'CancelledState', 'CheckingBudgetState',
    'CheckingForCancellationState', 'CheckingGitCommitsState', 'ContractViolationError',
    'DEFAULT_TABLE', 'Deadline', 'EndOfTurnState', 'ErrorState', 'ExternalBudget', 'FailingMove',
    'FailureSummary', 'ForcedLogLevel', 'FormatBatchReportOptions', 'FormatHistoryOptions',
    'FormatSummaryOptions', 'GanttOptions', 'GatheringAdditionalMessagesState',
    'HistoryDiagramOptions', 'HistoryDurability', 'HistoryEntry', 'HistoryFileError',
    'HistoryFileErrorCode', 'HistoryIssue', 'HistoryItem', 'HistoryMeta', 'HistorySink',
    'HistorySummarizer', 'HistorySummary', 'HistoryTableInfo', 'HistoryToOtlpOptions',
    'HistoryValidation', 'HistoryValidator', 'HistoryWarning', 'HtmlReport',
    'IllegalTransitionError', 'InvalidArgumentError', 'InvalidTableError', 'JournalEntry',
    'JournalError', 'JournalLine', 'JournalLineRead', 'JournalOptions', 'JsonlHistorySink',
    'JsonlHistorySinkOptions', 'LLMAttemptEvent', 'LLMCallError', 'LLMCallInput', 'LLMResponse',
    'LlmJournalEntry', 'LoadedHistory', 'MachineMovedError', 'OnUnknownCost', 'OperationContext',
    'OperationError', 'OtlpAnyValue', 'OtlpKeyValue', 'OtlpResourceSpans', 'OtlpSpan',
    'OtlpTraceExport', 'PricePolicy', 'PricedResponse', 'Pricing', 'ProcessingLLMResponseState',
    'ReadHistoryOptions', 'ReadyState', 'RejectedMove', 'ReplayDivergedError', 'ReplayReport',
    'ReplayRunOptions', 'ReplayedLoop', 'ReplayedMove', 'ResetInfo', 'ResetMarker', 'RetryOptions',
    'RunDiagram', 'RunFacts', 'RunFactsCollector', 'RunFactsOptions', 'RunOutcome',
    'RunPageOptions', 'RunReport', 'RunSkippedError', 'RunTaskOptions', 'RunTurnOptions',
    'RunUsage', 'RunningAutoformattersState', 'RunningToolState', 'STATES', 'STATE_NAMES',
    'ScriptedAgent', 'ScriptedCall', 'ScriptedReply', 'ScriptedTool', 'SendingToLLMState',
    'SendingToolResultsState', 'SettleInfo', 'SkipReason', 'Sleep', 'SpentLimit', 'State',
    'StateMachine', 'StateMachineError', 'StateMachineEvents', 'StateMachineOptions', 'StateName',
    'StateSpec', 'StateTime', 'SummarizeHistoryOptions', 'TRANSITIONS', 'TableCheck',
    'TableExtension', 'TableIssue', 'TaskRun', 'ToolCall', 'ToolCallEvent', 'ToolJournalEntry',
    'ToolResult', 'ToolUseRequestedState', 'TransitionEvent', 'TransitionRecord', 'TransitionTable',
    'TransitionValidator', 'TurnCancelledError', 'TurnError', 'TurnFacts', 'TurnInProgressError',
    'TurnOutcome', 'TurnResult', 'TurnSummary', 'UNKNOWN_STATE', 'UnansweredToolCall',
    'UnknownState', 'UnknownStateError', 'Usage', 'UsageDelta', 'UsageMeter', 'UsageMeterOptions',
    'UsagePoint', 'UsageTotals', 'VERSION', 'WaitingForUserInputState', 'addUsage',
    'assertBudgetLimits', 'assertValidTable', 'buildHtmlReport', 'canTransition', 'checkTable',
    'createScriptedAgent', 'createTable', 'defaultShouldRetry', 'emptyUsage', 'extendTable',
    'formatBatchReport', 'formatDuration', 'formatHistory', 'formatSummary', 'historyToGantt',
    'historyToMermaid', 'historyToOtlp', 'loadHistory', 'priceResponse', 'priceUsage',
    'readHistory', 'redactCredentials', 'renderBatchPage', 'renderRunPage', 'replayLoop',
    'replayRun', 'retryAfterMs', 'runBatch', 'runFacts', 'runTask', 'safeFileName',
    'summarizeHistory', 'tableEdges', 'tableStates', 'toMermaid', 'validateHistory',
  ],
  './openai': [
    'OpenAIChatLoop', 'OpenAIChatOptions', 'OpenAIChatTool', 'OpenAIResponseError',
    'OpenAIResponsesLoop', 'OpenAIResponsesOptions', 'OpenAIResponsesTool', 'StreamTextHandler',
    'ToolRunContext', 'fromOpenAIChat', 'fromOpenAIResponses', 'mapOpenAIUsage',
    'mapResponsesUsage',
  ],
  './anthropic': [
    'AnthropicLoop', 'AnthropicOptions', 'AnthropicTool', 'StreamTextHandler', 'ToolRunContext',
    'fromAnthropic', 'mapAnthropicUsage',
  ],
  './pricing': [
    'PricingOptions', 'TokenPrices', 'createPricing',
  ],
  './ai-sdk': [
    'AISDKAgentLoop', 'AISDKBudgetGuard', 'AISDKCallSettings', 'BudgetForOptions',
    'FromAISDKOptions', 'budgetFor', 'fromAISDK', 'usageFromAISDK',
  ],
  './otel': [
    'TraceAgentOptions', 'TraceBatchOptions', 'TraceableAgent', 'traceAgent', 'traceBatch',
  ],
  './bullmq': [
    'BatchHandle', 'BatchWorkerHandle', 'BatchWorkerOptions', 'DistributedBatchReport',
    'DistributedRunReport', 'DistributedTask', 'PriceTable', 'RedisBudget', 'RedisConnection',
    'SubmitBatchOptions', 'WorkerLostError', 'startBatchWorker', 'submitBatch',
  ],
  './mcp': [
    'McpAISDKTool', 'McpClient', 'McpInputSchema', 'McpSkippedTool', 'McpTool', 'McpToolError',
    'McpToolErrorCode', 'McpToolInfo', 'McpTools', 'McpToolsChange', 'McpToolsOptions', 'mcpTools',
  ],
};

describe('the package exports', () => {
  const all = listExports();

  it('has exactly the pinned entry points', () => {
    expect(Object.keys(all).sort()).toEqual(Object.keys(PINNED).sort());
  });

  it.each(Object.keys(PINNED))('%s exports exactly the pinned names', (entry) => {
    expect(all[entry]?.map((e) => e.name)).toEqual(PINNED[entry]);
  });

  it('documents every export with TSDoc', () => {
    const undocumented = Object.entries(all).flatMap(([entry, exports]) =>
      exports.filter((e) => e.summary === '').map((e) => `${entry}: ${e.name}`),
    );
    expect(undocumented).toEqual([]);
  });

  it("matches the README's API reference (npx tsx test/helpers/apiReference.ts --pin --write)", () => {
    expect(readmeApiReference()).toBe(renderApiReference(all));
  });
});
