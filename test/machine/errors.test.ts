import { IllegalTransitionError, InvalidArgumentError, StateMachineError, UnknownStateError } from '../../lib/index';

describe('errors', () => {
  it('are StateMachineErrors with a stable code and their class name', () => {
    const errors = [
      new IllegalTransitionError('Ready', 'Error', ['WaitingForUserInput'], '', 5),
      new InvalidArgumentError('maxHistorySize', 'a positive integer', 0),
      new UnknownStateError('Nope', ['Ready'], 'transition() target'),
    ];
    expect(errors.map((e) => [e instanceof StateMachineError, e instanceof Error, e.name, e.code])).toEqual([
      [true, true, 'IllegalTransitionError', 'illegal_transition'],
      [true, true, 'InvalidArgumentError', 'invalid_argument'],
      [true, true, 'UnknownStateError', 'unknown_state'],
    ]);
  });

  it('InvalidArgumentError names the argument, the expectation and the value with its type', () => {
    const error = new InvalidArgumentError('maxHistorySize', 'a positive integer', '10');
    expect(error.message).toBe('Expected `maxHistorySize` to be a positive integer, got `10` (string)');
    expect(error).toMatchObject({ argument: 'maxHistorySize', expected: 'a positive integer', value: '10' });
  });

  it('IllegalTransitionError.toJSON() keeps the data a log or file needs', () => {
    const error = new IllegalTransitionError(
      'ProcessingLLMResponse',
      'BudgetExceeded',
      ['EndOfTurn', 'ToolUseRequested', 'Error'],
      'over budget',
      42,
    );
    expect(JSON.parse(JSON.stringify(error))).toEqual({
      code: 'illegal_transition',
      from: 'ProcessingLLMResponse',
      to: 'BudgetExceeded',
      allowed: ['EndOfTurn', 'ToolUseRequested', 'Error'],
      description: 'over budget',
      at: 42,
    });
  });
});
