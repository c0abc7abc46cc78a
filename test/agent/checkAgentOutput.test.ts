import { llmResponseProblem, stringListProblem, toolResultProblem } from '../../lib/agent/checkAgentOutput';

describe('llmResponseProblem()', () => {
  it('accepts well-formed responses', () => {
    expect(llmResponseProblem({})).toBeUndefined();
    expect(llmResponseProblem({ text: 'hi', toolCalls: [{ id: 'a', name: 'x', input: { y: 1 } }], usage: { inputTokens: 1, costUsd: 0 } })).toBeUndefined();
  });

  it.each([
    [[], 'expected an LLMResponse object { text?, toolCalls?, usage? }, got `[]` (array)'],
    [{ toolCalls: {} }, 'toolCalls must be an array, got `{}` (object)'],
    [{ toolCalls: ['bash'] }, 'toolCalls[0] must be { id, name, input? }, got `bash` (string)'],
    [{ toolCalls: [{ name: 'x' }] }, 'toolCalls[0].id must be a non-empty string, got `undefined`'],
    [{ usage: 3 }, 'usage must be an object, got `3` (number)'],
    [{ usage: { outputTokens: Number.NaN } }, 'usage.outputTokens must be a non-negative number, got `NaN` (number)'],
  ])('names what is wrong with %p', (value, problem) => {
    expect(llmResponseProblem(value)).toBe(problem);
  });
});

describe('toolResultProblem()', () => {
  const call = { id: 'c1', name: 'bash' };
  it('accepts a result for the call', () => {
    expect(toolResultProblem({ callId: 'c1', output: '' }, call)).toBeUndefined();
    expect(toolResultProblem({ callId: 'c1', output: 'x', isError: true }, call)).toBeUndefined();
  });
  it.each([
    ['ok', 'expected a ToolResult { callId, output, isError? } for call c1 (bash), got `ok` (string)'],
    [{ callId: 'c1', output: 5 }, 'result.output must be a string, got `5` (number)'],
    [{ callId: 'c1', output: 'x', isError: 'yes' }, 'result.isError must be a boolean, got `yes` (string)'],
  ])('names what is wrong with %p', (value, problem) => {
    expect(toolResultProblem(value, call)).toBe(problem);
  });
});

describe('stringListProblem()', () => {
  it('accepts string arrays, and undefined only when allowed', () => {
    expect(stringListProblem(['a'])).toBeUndefined();
    expect(stringListProblem(undefined, true)).toBeUndefined();
    expect(stringListProblem(undefined)).toBe('expected an array of strings, got `undefined`');
    expect(stringListProblem(['a', 2])).toBe('item 1 must be a string, got `2` (number)');
  });
});
