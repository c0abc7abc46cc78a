import { ReadyState } from './ReadyState';
import { WaitingForUserInputState } from './WaitingForUserInputState';
import { SendingToLLMState } from './SendingToLLMState';
import { ProcessingLLMResponseState } from './ProcessingLLMResponseState';
import { EndOfTurnState } from './EndOfTurnState';
import { ToolUseRequestedState } from './ToolUseRequestedState';
import { CheckingForCancellationState } from './CheckingForCancellationState';
import { RunningToolState } from './RunningToolState';
import { CheckingGitCommitsState } from './CheckingGitCommitsState';
import { RunningAutoformattersState } from './RunningAutoformattersState';
import { CheckingBudgetState } from './CheckingBudgetState';
import { GatheringAdditionalMessagesState } from './GatheringAdditionalMessagesState';
import { SendingToolResultsState } from './SendingToolResultsState';
import { CancelledState } from './CancelledState';
import { BudgetExceededState } from './BudgetExceededState';
import { ErrorState } from './ErrorState';
import type { AgentState } from './AgentState';
import type { StateName } from './StateName';

/**
 * One instance of each state class, by name. The mapped type makes the compiler insist on
 * all sixteen, each under its own name.
 */
export const STATES: { readonly [K in StateName]: AgentState<StateName> & { readonly name: K } } = Object.freeze({
  Ready: new ReadyState(),
  WaitingForUserInput: new WaitingForUserInputState(),
  SendingToLLM: new SendingToLLMState(),
  ProcessingLLMResponse: new ProcessingLLMResponseState(),
  EndOfTurn: new EndOfTurnState(),
  ToolUseRequested: new ToolUseRequestedState(),
  CheckingForCancellation: new CheckingForCancellationState(),
  RunningTool: new RunningToolState(),
  CheckingGitCommits: new CheckingGitCommitsState(),
  RunningAutoformatters: new RunningAutoformattersState(),
  CheckingBudget: new CheckingBudgetState(),
  GatheringAdditionalMessages: new GatheringAdditionalMessagesState(),
  SendingToolResults: new SendingToolResultsState(),
  Cancelled: new CancelledState(),
  BudgetExceeded: new BudgetExceededState(),
  Error: new ErrorState(),
});
