/**
 * The sixteen states of the agent flow, as data. `State.RunningTool === 'RunningTool'`, so
 * a state name is a plain string everywhere (history files, logs, events) yet typo-proof in code.
 */
export const State = {
  Ready: 'Ready',
  WaitingForUserInput: 'WaitingForUserInput',
  SendingToLLM: 'SendingToLLM',
  ProcessingLLMResponse: 'ProcessingLLMResponse',
  EndOfTurn: 'EndOfTurn',
  ToolUseRequested: 'ToolUseRequested',
  CheckingForCancellation: 'CheckingForCancellation',
  RunningTool: 'RunningTool',
  CheckingGitCommits: 'CheckingGitCommits',
  RunningAutoformatters: 'RunningAutoformatters',
  CheckingBudget: 'CheckingBudget',
  GatheringAdditionalMessages: 'GatheringAdditionalMessages',
  SendingToolResults: 'SendingToolResults',
  Cancelled: 'Cancelled',
  BudgetExceeded: 'BudgetExceeded',
  Error: 'Error',
} as const;

/** One of the sixteen state names. */
export type StateName = (typeof State)[keyof typeof State];

/** What `previous` reports before the first move, as in the original. */
export const UNKNOWN_STATE = 'Unknown' as const;
/** The type of `UNKNOWN_STATE`: the "previous state" before the first move. */
export type UnknownState = typeof UNKNOWN_STATE;

/** The sixteen names in the flow's order. */
export const STATE_NAMES: readonly StateName[] = Object.freeze(Object.values(State));
