import { llmResponseProblem, splitUsage, stringListProblem, toolResultProblem } from '../../lib/agent/checkAgentOutput';

describe('llmResponseProblem()', () => {
  it('accepts well-formed responses', () => {
    expect(llmResponseProblem({ text: '' })).toBeUndefined();
    expect(llmResponseProblem({ toolCalls: [] })).toBeUndefined();
    expect(llmResponseProblem({ text: 'hi', toolCalls: [{ id: 'a', name: 'x', input: { y: 1 } }], usage: { inputTokens: 1, costUsd: 0 } })).toBeUndefined();
  });

  it.each([
    [[], 'expected an LLMResponse object { text?, toolCalls?, usage? }, got `[]` (array)'],
    [{ toolCalls: {} }, 'toolCalls must be an array, got `{}` (object)'],
    [{ toolCalls: ['bash'] }, 'toolCalls[0] must be { id, name, input? }, got `bash` (string)'],
    [{ toolCalls: [{ name: 'x' }] }, 'toolCalls[0].id must be a non-empty string, got `undefined`'],
    [{}, "a response needs text (a string) or toolCalls (an array), got an object with no keys — return an LLMResponse, not the SDK's raw response"],
    [{ choices: [] }, "a response needs text (a string) or toolCalls (an array), got an object with keys choices — return an LLMResponse, not the SDK's raw response"],
    [{ text: 'x', model: 4 }, 'model must be a string, got `4` (number)'],
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

describe('splitUsage()', () => {
  it('keeps the valid fields and names the bad ones', () => {
    expect(splitUsage({ costUsd: 5, inputTokens: Number.NaN, cachedInputTokens: 3, outputTokens: undefined })).toEqual({
      valid: { costUsd: 5, cachedInputTokens: 3 },
      problems: ['usage.inputTokens must be a non-negative number, got `NaN` (number)'],
    });
    expect(splitUsage(3)).toEqual({ valid: {}, problems: ['usage must be an object, got `3` (number)'] });
    expect(splitUsage(undefined)).toEqual({ valid: {}, problems: [] });
  });
});
