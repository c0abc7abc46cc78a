import { RunSkippedError, StateMachineError } from '../../lib/index';

describe('RunSkippedError', () => {
  it('carries the reason, its message and the spent limit, with a stable code', () => {
    const spent = {
      limit: 'maxCostUsd' as const,
      used: 5.02,
      max: 5,
      message: 'shared budget exceeded: $5.0200 of $5.0000 after 41 LLM calls',
    };
    const error = new RunSkippedError('budget_exceeded', spent.message, spent);
    expect(error).toBeInstanceOf(StateMachineError);
    expect([error.name, error.code, error.reason, error.message]).toEqual([
      'RunSkippedError',
      'run_skipped',
      'budget_exceeded',
      spent.message,
    ]);
    expect(error.spent).toBe(spent);
    expect(new RunSkippedError('aborted', 'batch aborted').spent).toBeUndefined();
  });
});
