import fc from 'fast-check';
import { describeValue } from '../../lib/internal/describeValue';
import {
  llmResponseProblem,
  splitUsage,
  stringListProblem,
  toolResultProblem,
} from '../../lib/agent/turn/checkAgentOutput';

describe('llmResponseProblem()', () => {
  it('accepts well-formed responses', () => {
    expect(llmResponseProblem({ text: '' })).toBeUndefined();
    expect(llmResponseProblem({ toolCalls: [] })).toBeUndefined();
    expect(
      llmResponseProblem({
        text: 'hi',
        toolCalls: [{ id: 'a', name: 'x', input: { y: 1 } }],
        usage: { inputTokens: 1, costUsd: 0 },
      }),
    ).toBeUndefined();
  });

  it('accepts empty and repeated ids: each call is still answered, in order', () => {
    expect(
      llmResponseProblem({
        toolCalls: [
          { id: '', name: 'x' },
          { id: 'a', name: 'y' },
          { id: 'a', name: 'z' },
        ],
      }),
    ).toBeUndefined();
  });

  it.each([
    [[], 'expected an LLMResponse object { text?, toolCalls?, usage? }, got `[]` (array)'],
    [{ toolCalls: {} }, 'toolCalls must be an array, got `{}` (object)'],
    [{ toolCalls: ['bash'] }, 'toolCalls[0] must be { id, name, input? }, got `bash` (string)'],
    [{ toolCalls: [{ name: 'x' }] }, 'toolCalls[0].id must be a string, got `undefined`'],
    [
      {},
      "a response needs text (a string) or toolCalls (an array), got an object with no keys — return an LLMResponse, not the SDK's raw response",
    ],
    [
      { choices: [] },
      "a response needs text (a string) or toolCalls (an array), got an object with keys choices — return an LLMResponse, not the SDK's raw response",
    ],
    [{ text: 'x', model: 4 }, 'model must be a string, got `4` (number)'],
    [{ text: 'x', finishReason: null }, 'finishReason must be a string, got `null`'],
    [{ text: 'x', model: 'm', finishReason: 2 }, 'finishReason must be a string, got `2` (number)'],
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

describe('llmResponseProblem() tool call ids', () => {
  // The rule in its plainest form: the reference the check must agree with.
  function reference(calls: unknown[]): string | undefined {
    for (const [i, call] of calls.entries()) {
      if (typeof call !== 'object' || call === null || Array.isArray(call))
        return `toolCalls[${i}] must be { id, name, input? }, got ${describeValue(call)}`;
      const { id, name } = call as { id?: unknown; name?: unknown };
      if (typeof id !== 'string') return `toolCalls[${i}].id must be a string, got ${describeValue(id)}`;
      if (typeof name !== 'string' || name === '')
        return `toolCalls[${i}].name must be a non-empty string, got ${describeValue(name)}`;
    }
    return undefined;
  }

  it('finds the first bad call as the reference does, for any number of calls, repeated ids included (property-based)', () => {
    const id = fc.oneof(
      { weight: 8, arbitrary: fc.string({ maxLength: 2 }) },
      { weight: 1, arbitrary: fc.constantFrom<unknown>(7, undefined, null) },
    );
    const call = fc.oneof(
      { weight: 12, arbitrary: fc.record({ id, name: fc.constantFrom<unknown>('bash', 'read', '', 3) }) },
      { weight: 1, arbitrary: fc.constantFrom<unknown>(null, 'bash', [], 4) },
    );
    const calls = fc.oneof(
      fc.array(call, { maxLength: 40 }),
      fc
        .integer({ min: 0, max: 40 })
        .map((n) => Array.from({ length: n }, (_, i) => ({ id: `c${i % 37}`, name: 'bash' }))),
    );
    fc.assert(
      fc.property(calls, (toolCalls) => {
        expect(llmResponseProblem({ toolCalls })).toBe(reference(toolCalls));
      }),
      { numRuns: 500 },
    );
  });
});

describe('splitUsage() field by field', () => {
  const KEYS = [
    'inputTokens',
    'outputTokens',
    'cachedInputTokens',
    'cacheWriteTokens',
    'reasoningTokens',
    'costUsd',
  ] as const;
  // The loop over the keys it replaced: the reference.
  function byLoop(usage: Record<string, unknown>): { valid: Record<string, number>; problems: string[] } {
    const valid: Record<string, number> = {};
    const problems: string[] = [];
    for (const key of KEYS) {
      const value = usage[key];
      if (value === undefined) continue;
      const max = key === 'costUsd' ? 1e4 : 1e9;
      if (typeof value === 'number' && Number.isFinite(value) && value >= 0) {
        if (value <= max) valid[key] = value;
        else problems.push(`usage.${key} must be at most ${max} (the stated bound for one response), got ${value}`);
      } else problems.push(`usage.${key} must be a non-negative number, got ${describeValue(value)}`);
    }
    return { valid, problems };
  }

  it('keeps the same fields in the same order, and names the same problems (property-based)', () => {
    const value = fc.oneof(
      fc.nat(5000),
      fc.double({ noDefaultInfinity: false }),
      fc.constantFrom<unknown>(undefined, null, '7', -1, Number.NaN, {}),
    );
    const usage = fc.dictionary(fc.constantFrom(...KEYS, 'totalTokens', 'model'), value, { maxKeys: 8 });
    fc.assert(
      fc.property(usage, (u) => {
        const got = splitUsage(u);
        const want = byLoop(u);
        expect(got).toEqual(want);
        expect(Object.keys(got.valid)).toEqual(Object.keys(want.valid));
      }),
      { numRuns: 500 },
    );
  });
});
