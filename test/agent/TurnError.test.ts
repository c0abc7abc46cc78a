import {
  BudgetExceededError,
  ContractViolationError,
  LLMCallError,
  OperationError,
  TurnCancelledError,
  TurnInProgressError,
} from '../../lib/index';

describe('turn errors', () => {
  it('carry a stable code and the data to act on', () => {
    const cause = new Error('503');
    expect(new LLMCallError('sendUserMessage', [{ attempt: 1, error: '503' }], cause)).toMatchObject({
      code: 'llm_call_failed',
      cause,
      message: 'sendUserMessage failed after 1 attempt: 503',
    });
    expect(new ContractViolationError('runTool(x)', 'bad', 1)).toMatchObject({
      code: 'contract_violation',
      operation: 'runTool(x)',
      value: 1,
    });
    expect(new BudgetExceededError('m', 'maxCostUsd', 2, 1)).toMatchObject({
      code: 'budget_exceeded',
      limit: 'maxCostUsd',
      used: 2,
      max: 1,
    });
    expect(new TurnCancelledError('Esc', 'RunningTool')).toMatchObject({
      code: 'cancelled',
      message: 'cancelled during RunningTool: Esc',
    });
    expect(new OperationError('gather', 'x')).toMatchObject({
      code: 'operation_failed',
      name: 'OperationError',
      cause: 'x',
    });
    expect(new TurnInProgressError(3, 'RunningTool')).toMatchObject({
      code: 'turn_in_progress',
      turn: 3,
      state: 'RunningTool',
    });
  });
});
