/**
 * History files: the sinks that write a run's moves (with its journal and money ledger), the
 * readers that load or stream them back, and what is read from them: validation against the
 * table, a summary, the facts of a run, its conversation.
 *
 * @module agent-state-machine/history
 */
export { JsonlHistorySink } from '../history/JsonlHistorySink';
export type { JsonlHistorySinkOptions, HistoryDurability } from '../history/JsonlHistorySinkOptions';
export { RunLinesSink } from '../history/RunLinesSink';
export type { RunLineWriter } from '../history/RunLinesSink';

export { readHistory, loadHistory } from '../history/loadHistory';
export type { ReadHistoryOptions, LoadedHistory } from '../history/loadHistory';
export { readRunFile } from '../history/readRunFile';
export type { RunFileFacts } from '../history/readRunFile';
export type { AttemptSpend } from '../history/spendOverAttempts';
export type {
  HistoryEntry,
  HistoryItem,
  HistoryMeta,
  HistoryWarning,
  HttpExchangeLine,
  JournalLineRead,
  RejectedMove,
  ResetMarker,
} from '../history/HistoryEntry';
export type { HistoryTableInfo } from '../history/HistoryTableInfo';
export { HistoryFileError } from '../history/HistoryFileError';
export type { HistoryFileErrorCode } from '../history/HistoryFileError';

export { validateHistory } from '../history/validateHistory';
export type { HistoryIssue, HistoryValidation } from '../history/validateHistory';
export { summarizeHistory } from '../history/summarizeHistory';
export type {
  HistorySummary,
  SummarizeHistoryOptions,
  StateTime,
  TurnSummary,
  FailureSummary,
} from '../history/summarizeHistory';
export type { StallNote } from '../history/stallNoteOf';
export { runFacts } from '../history/runFacts';
export type { RunFacts, RunFactsOptions, TurnFacts, FailingMove, RunUsage, UsagePoint } from '../history/runFacts';
export type { RunSpend } from '../history/RunSpend';
export { formatSummary } from '../history/formatSummary';
export type { FormatSummaryOptions } from '../history/formatSummary';
export { formatConversation } from '../history/formatConversation';
export type { FormatConversationOptions } from '../history/formatConversation';
