import { checkSdkLoopOptions, runSdkTool, type SdkTool } from '../../lib/internal/sdkTools';

const ctx = { signal: new AbortController().signal, turn: 3 };
const echo: SdkTool = {
  parameters: { type: 'object' },
  run: (input, c) => JSON.stringify({ input, turn: c.turn, call: c.call }),
};

describe('runSdkTool', () => {
  it('parses JSON text input and hands the tool the turn, signal and call', async () => {
    expect(await runSdkTool({ echo }, { id: 'c1', name: 'echo', input: '{"a":1}' }, ctx)).toEqual({
      output: JSON.stringify({ input: { a: 1 }, turn: 3, call: { id: 'c1', name: 'echo' } }),
    });
  });

  it('passes parsed input through, and treats empty or missing input as {}', async () => {
    expect(
      JSON.parse((await runSdkTool({ echo }, { id: 'c', name: 'echo', input: { b: 2 } }, ctx)).output).input,
    ).toEqual({ b: 2 });
    expect(JSON.parse((await runSdkTool({ echo }, { id: 'c', name: 'echo', input: '  ' }, ctx)).output).input).toEqual(
      {},
    );
    expect(JSON.parse((await runSdkTool({ echo }, { id: 'c', name: 'echo' }, ctx)).output).input).toEqual({});
  });

  it('returns an error result for bad JSON and for an unknown tool, inherited names included', async () => {
    expect(await runSdkTool({ echo }, { id: 'c', name: 'echo', input: '{"a":' }, ctx)).toMatchObject({
      isError: true,
      output: expect.stringMatching(/^error: the arguments of echo are not valid JSON/),
    });
    expect(await runSdkTool({ echo }, { id: 'c', name: 'toString', input: '{}' }, ctx)).toEqual({
      isError: true,
      output: 'error: there is no tool named "toString"; the tools are: echo',
    });
    expect(await runSdkTool({}, { id: 'c', name: 'x' }, ctx)).toEqual({
      isError: true,
      output: 'error: there is no tool named "x"; the tools are: (none)',
    });
  });

  it('takes { output, isError } from a tool that reports its own failure', async () => {
    const failing: SdkTool = { parameters: {}, run: async () => ({ output: 'disk full', isError: true }) };
    const fine: SdkTool = { parameters: {}, run: () => ({ output: 'ok', isError: false }) };
    expect(await runSdkTool({ failing }, { id: 'c', name: 'failing' }, ctx)).toEqual({
      output: 'disk full',
      isError: true,
    });
    expect(await runSdkTool({ fine }, { id: 'c', name: 'fine' }, ctx)).toEqual({ output: 'ok' });
  });

  it('rejects an output object without text or with an isError that is not a boolean', async () => {
    const noText: SdkTool = { parameters: {}, run: () => ({ text: 'x' }) as never };
    const oddFlag: SdkTool = { parameters: {}, run: () => ({ output: 'x', isError: 'yes' }) as never };
    const nothing: SdkTool = { parameters: {}, run: () => null as never };
    await expect(runSdkTool({ noText }, { id: 'c', name: 'noText' }, ctx)).rejects.toThrow(
      'tool noText returned object, expected a string or { output: string, isError?: boolean }',
    );
    await expect(runSdkTool({ oddFlag }, { id: 'c', name: 'oddFlag' }, ctx)).rejects.toThrow(
      'tool oddFlag returned isError "yes" (string), expected a boolean or undefined',
    );
    await expect(runSdkTool({ nothing }, { id: 'c', name: 'nothing' }, ctx)).rejects.toThrow(
      'tool nothing returned null, expected a string',
    );
  });

  it('lets what the tool throws propagate, and rejects a non-string output', async () => {
    const boom: SdkTool = { parameters: {}, run: () => Promise.reject(new Error('disk full')) };
    const number: SdkTool = { parameters: {}, run: () => 5 as unknown as string };
    await expect(runSdkTool({ boom }, { id: 'c', name: 'boom' }, ctx)).rejects.toThrow('disk full');
    await expect(runSdkTool({ number }, { id: 'c', name: 'number' }, ctx)).rejects.toThrow(
      'tool number returned number, expected a string',
    );
  });
});

describe('checkSdkLoopOptions', () => {
  it('accepts the full shape and names the first bad option', () => {
    expect(
      checkSdkLoopOptions({
        model: 'm',
        tools: { echo },
        system: 's',
        messages: [],
        maxTokens: 10,
        stream: { onText() {} },
        request: { temperature: 0 },
      }),
    ).toBeUndefined();
    expect(checkSdkLoopOptions(null)?.argument).toBe('options');
    expect(checkSdkLoopOptions({ model: 'm', tools: [] })?.argument).toBe('options.tools');
    expect(checkSdkLoopOptions({ model: 'm', tools: { echo: { run() {} } } })?.argument).toBe(
      'options.tools.echo.parameters',
    );
    expect(checkSdkLoopOptions({ model: 'm', messages: {} })?.argument).toBe('options.messages');
    expect(checkSdkLoopOptions({ model: 'm', maxTokens: 1.5 })?.argument).toBe('options.maxTokens');
    expect(checkSdkLoopOptions({ model: 'm', stream: {} })?.argument).toBe('options.stream');
    expect(checkSdkLoopOptions({ model: 'm', request: [] })?.argument).toBe('options.request');
    expect(checkSdkLoopOptions({ model: 'm', system: 1 })?.argument).toBe('options.system');
    expect(checkSdkLoopOptions({ model: 'm', request: { stream: true } })).toMatchObject({
      argument: 'options.request.stream',
      expected: 'left out: the loop sets it (use options.stream)',
    });
    expect(checkSdkLoopOptions({ model: 'm', request: { model: 'x' } })?.argument).toBe('options.request.model');
  });
});
