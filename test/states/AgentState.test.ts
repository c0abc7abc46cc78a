import { AgentState } from '../../states/AgentState';
import { BudgetExceededState } from '../../states/BudgetExceededState';
import { CancelledState } from '../../states/CancelledState';
import { CheckingBudgetState } from '../../states/CheckingBudgetState';
import { CheckingForCancellationState } from '../../states/CheckingForCancellationState';
import { CheckingGitCommitsState } from '../../states/CheckingGitCommitsState';
import { EndOfTurnState } from '../../states/EndOfTurnState';
import { ErrorState } from '../../states/ErrorState';
import { GatheringAdditionalMessagesState } from '../../states/GatheringAdditionalMessagesState';
import { ProcessingLLMResponseState } from '../../states/ProcessingLLMResponseState';
import { ReadyState } from '../../states/ReadyState';
import { RunningAutoformattersState } from '../../states/RunningAutoformattersState';
import { RunningToolState } from '../../states/RunningToolState';
import { SendingToLLMState } from '../../states/SendingToLLMState';
import { SendingToolResultsState } from '../../states/SendingToolResultsState';
import { ToolUseRequestedState } from '../../states/ToolUseRequestedState';
import { WaitingForUserInputState } from '../../states/WaitingForUserInputState';

const classes = [
  ReadyState,
  WaitingForUserInputState,
  SendingToLLMState,
  ProcessingLLMResponseState,
  EndOfTurnState,
  ToolUseRequestedState,
  CheckingForCancellationState,
  RunningToolState,
  CheckingGitCommitsState,
  RunningAutoformattersState,
  CheckingBudgetState,
  GatheringAdditionalMessagesState,
  SendingToolResultsState,
  CancelledState,
  BudgetExceededState,
  ErrorState,
];

describe('AgentState subclasses', () => {
  it('are sixteen, each named after its class', () => {
    expect(classes).toHaveLength(16);
    for (const C of classes) {
      const state = new C();
      expect(state).toBeInstanceOf(AgentState);
      expect(`${state.name}State`).toBe(C.name);
      expect(String(state)).toBe(state.name);
    }
  });

  it('ErrorState does not shadow the global Error', () => {
    expect(new ErrorState()).not.toBeInstanceOf(Error);
    expect(new ErrorState().name).toBe('Error');
  });

  it(".description is the seed's one line", () => {
    expect(new ReadyState().description).toBe('Initial state when the agent is initialized and ready to operate');
    expect(new GatheringAdditionalMessagesState().description).toBe(
      'Agent collects user messages that arrived during tool execution',
    );
    for (const C of classes) expect(new C().description).toMatch(/^[A-Z][^\n]*[^.\s]$/);
  });

  it('.isTerminal is true exactly for EndOfTurn, Cancelled, BudgetExceeded and Error', () => {
    const terminal = classes
      .map((C) => new C())
      .filter((s) => s.isTerminal)
      .map((s) => s.name);
    expect(terminal.sort()).toEqual(['BudgetExceeded', 'Cancelled', 'EndOfTurn', 'Error']);
  });

  it('.isError is true exactly for Error, Cancelled and BudgetExceeded', () => {
    const errors = classes
      .map((C) => new C())
      .filter((s) => s.isError)
      .map((s) => s.name);
    expect(errors.sort()).toEqual(['BudgetExceeded', 'Cancelled', 'Error']);
  });

  it('.canMoveTo() follows .next', () => {
    const s = new CheckingForCancellationState();
    expect(s.next).toEqual(['RunningTool', 'Cancelled']);
    expect(s.canMoveTo('RunningTool')).toBe(true);
    expect(s.canMoveTo('Cancelled')).toBe(true);
    expect(s.canMoveTo('Error')).toBe(false);
    expect(s.canMoveTo('Nonsense')).toBe(false);
  });
});
