import { State, STATE_NAMES, UNKNOWN_STATE } from '../../states/StateName';

describe('State', () => {
  it('maps each name to itself', () => {
    for (const [key, value] of Object.entries(State)) expect(value).toBe(key);
    expect(State.RunningTool).toBe('RunningTool');
  });

  it('STATE_NAMES lists the sixteen states in the flow order', () => {
    expect(STATE_NAMES).toEqual([
      'Ready',
      'WaitingForUserInput',
      'SendingToLLM',
      'ProcessingLLMResponse',
      'EndOfTurn',
      'ToolUseRequested',
      'CheckingForCancellation',
      'RunningTool',
      'CheckingGitCommits',
      'RunningAutoformatters',
      'CheckingBudget',
      'GatheringAdditionalMessages',
      'SendingToolResults',
      'Cancelled',
      'BudgetExceeded',
      'Error',
    ]);
    expect(Object.isFrozen(STATE_NAMES)).toBe(true);
  });

  it('UNKNOWN_STATE is not one of the states', () => {
    expect(UNKNOWN_STATE).toBe('Unknown');
    expect(STATE_NAMES).not.toContain(UNKNOWN_STATE);
  });
});
