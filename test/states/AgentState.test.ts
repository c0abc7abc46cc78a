import {
  AgentState,
  BudgetExceededState,
  CancelledState,
  CheckingBudgetState,
  CheckingForCancellationState,
  CheckingGitCommitsState,
  EndOfTurnState,
  ErrorState,
  GatheringAdditionalMessagesState,
  ProcessingLLMResponseState,
  ReadyState,
  RunningAutoformattersState,
  RunningToolState,
  SendingToLLMState,
  SendingToolResultsState,
  ToolUseRequestedState,
  WaitingForUserInputState,
} from '../../lib/index';

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
