import { tool } from 'ai';
import { MockLanguageModelV3, convertArrayToReadableStream } from 'ai/test';
import { z } from 'zod';
import {
  AgentWithStateMachine,
  Budget,
  InvalidArgumentError,
  type AgentWithStateMachineOptions,
} from 'agent-state-machine';
import { fromAISDK } from '../../../lib/integrations/ai-sdk';
import { apiError, call, scriptedModel, text } from './scriptedModel';

const noWait = { sleep: () => Promise.resolve(), random: () => 0, logger: false as const };
const adapter = (loop: ReturnType<typeof fromAISDK>, options: AgentWithStateMachineOptions = {}) =>
  new AgentWithStateMachine(loop, { ...noWait, ...options });

function weatherTool(log: string[] = []) {
  return tool({
    description: 'The weather in a city',
    inputSchema: z.object({ city: z.string() }),
    execute: async ({ city }) => {
      log.push(city);
      return { city, celsius: 21 };
    },
  });
}

/** The tool results each prompt carried, as [callId, output type, value]. */
const toolResults = (prompt: { role: string; content: unknown }[]) =>
  prompt.flatMap((m) =>
    m.role === 'tool'
      ? (m.content as { toolCallId: string; output: { type: string; value: unknown } }[]).map((p) => [
          p.toolCallId,
          p.output.type,
          p.output.value,
        ])
      : [],
  );

describe('fromAISDK', () => {
  it('.sendUserMessage() runs a text turn: text, usage, model id and the conversation', async () => {
    const model = scriptedModel([
      {
        content: [text('Hello there.')],
        usage: { input: 120, output: 30, cacheRead: 100, reasoning: 12 },
        modelId: 'gpt-x-2026',
      },
    ]);
    const loop = fromAISDK({ model, system: 'Be brief.' });
    const agent = adapter(loop);
    const result = await agent.runTurn('Hi');
    expect(result).toMatchObject({ outcome: 'end_of_turn', text: 'Hello there.' });
    expect(result.usage).toMatchObject({ inputTokens: 120, outputTokens: 30, llmCalls: 1 });
    expect(loop.messages).toEqual([
      { role: 'user', content: 'Hi' },
      { role: 'assistant', content: [{ type: 'text', text: 'Hello there.' }] },
    ]);
    expect(model.prompts[0]?.[0]).toEqual({ role: 'system', content: 'Be brief.' });
  });

  it('reads its tools record at every step: a tool added or removed in place reaches the next step', async () => {
    const model = scriptedModel([{ content: [text('one')] }, { content: [text('two')] }]);
    const tools: Record<string, ReturnType<typeof weatherTool>> = { weather: weatherTool() };
    const agent = adapter(fromAISDK({ model, tools }));
    await agent.runTurn('first');
    tools.forecast = weatherTool();
    delete tools.weather;
    await agent.runTurn('second');
    expect(model.doGenerateCalls.map((c) => c.tools?.map((t) => t.name))).toEqual([['weather'], ['forecast']]);
  });

  it('.sendUserMessage() maps the usage details and passes the model id and finish reason', async () => {
    const model = scriptedModel([
      {
        content: [text('ok')],
        usage: { input: 120, output: 30, cacheRead: 100, cacheWrite: 7, reasoning: 12 },
        modelId: 'gpt-x-2026',
      },
    ]);
    const loop = fromAISDK({ model });
    const response = await loop.sendUserMessage('Hi', { signal: new AbortController().signal, turn: 1, attempt: 1 });
    expect(response).toEqual({
      text: 'ok',
      toolCalls: [],
      usage: { inputTokens: 120, outputTokens: 30, cachedInputTokens: 100, cacheWriteTokens: 7, reasoningTokens: 12 },
      model: 'gpt-x-2026',
      finishReason: 'stop',
    });
  });

  it('runs a tool turn: the adapter runs execute once and sends its result back', async () => {
    const log: string[] = [];
    const model = scriptedModel([
      { content: [text('Looking.'), call('c1', 'weather', { city: 'Oslo' })] },
      { content: [text('21 °C in Oslo.')] },
    ]);
    const loop = fromAISDK({ model, tools: { weather: weatherTool(log) } });
    const result = await adapter(loop).runTurn('Weather in Oslo?');
    expect(result).toMatchObject({ outcome: 'end_of_turn', text: '21 °C in Oslo.' });
    expect(result.usage).toMatchObject({ llmCalls: 2, toolCalls: 1 });
    expect(log).toEqual(['Oslo']);
    expect(toolResults(model.prompts[1]!)).toEqual([['c1', 'json', { city: 'Oslo', celsius: 21 }]]);
    expect(loop.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant']);
  });

  it('runs parallel tool calls at once under toolConcurrency and answers them in call order in one tool message', async () => {
    const model = scriptedModel([
      {
        content: [
          call('a', 'weather', { city: 'Oslo' }),
          call('b', 'weather', { city: 'Rome' }),
          call('c', 'weather', { city: 'Lima' }),
        ],
      },
      { content: [text('Done.')] },
    ]);
    // Each call waits until all three have started: they finish only if they run at once.
    const started: string[] = [];
    let allStarted: () => void = () => {};
    const together = new Promise<void>((resolve) => (allStarted = resolve));
    const weather = tool({
      inputSchema: z.object({ city: z.string() }),
      execute: async ({ city }) => {
        started.push(city);
        if (started.length === 3) allStarted();
        await together;
        return `${city}: 21 °C`;
      },
    });
    const loop = fromAISDK({ model, tools: { weather } });
    const result = await adapter(loop, { toolConcurrency: Infinity }).runTurn('Three cities');
    expect(result.outcome).toBe('end_of_turn');
    expect(started.sort()).toEqual(['Lima', 'Oslo', 'Rome']);
    expect(toolResults(model.prompts[1]!)).toEqual([
      ['a', 'text', 'Oslo: 21 °C'],
      ['b', 'text', 'Rome: 21 °C'],
      ['c', 'text', 'Lima: 21 °C'],
    ]);
    expect(toolResults(model.prompts[1]!).map(([id]) => id)).toEqual(['a', 'b', 'c']);
    expect(loop.messages.filter((m) => m.role === 'tool')).toHaveLength(1);
  });

  it('answers a call whose input fails the schema once, with the SDK message, and never executes it', async () => {
    const log: string[] = [];
    const model = scriptedModel([
      {
        content: [
          call('bad', 'weather', { town: 'Oslo' }),
          call('good', 'weather', { city: 'Rome' }),
          call('ghost', 'nope', {}),
        ],
      },
      { content: [text('Sorry.')] },
    ]);
    const loop = fromAISDK({ model, tools: { weather: weatherTool(log) } });
    const result = await adapter(loop).runTurn('Weather?');
    expect(result.outcome).toBe('end_of_turn');
    expect(log).toEqual(['Rome']);
    const sent = toolResults(model.prompts[1]!);
    expect(sent.map(([id, type]) => [id, type])).toEqual([
      ['bad', 'error-text'],
      ['good', 'json'],
      ['ghost', 'error-text'],
    ]);
    // AI SDK 7 names the cause's class in its message ("…: AI_TypeValidationError: Type validation failed").
    expect(sent[0]![2]).toMatch(/^Invalid input for tool weather: (AI_TypeValidationError: )?Type validation failed/);
    expect(sent[2]![2]).toMatch(/Model tried to call unavailable tool 'nope'/);
    // One answer per call in the conversation too: the SDK's own answers to invalid calls are not kept.
    const answered = loop.messages.flatMap((m) =>
      m.role === 'tool' ? m.content.map((p) => (p.type === 'tool-result' ? p.toolCallId : '')) : [],
    );
    expect(answered).toEqual(['bad', 'good', 'ghost']);
  });

  it('cancelled mid-tool: the finished call keeps its result, the rest are settled, and the next turn is valid', async () => {
    let release: () => void = () => {};
    const model = scriptedModel([
      { content: [call('fast', 'weather', { city: 'Oslo' }), call('slow', 'slow', {})] },
      { content: [text('Second turn works.')] },
    ]);
    let agent: AgentWithStateMachine | undefined;
    const slow = tool({
      inputSchema: z.object({}),
      execute: (_input, { abortSignal }) =>
        new Promise<string>((_resolve, reject) => {
          release = () => agent!.cancel('user pressed stop');
          abortSignal?.addEventListener('abort', () => reject(abortSignal.reason), { once: true });
          release();
        }),
    });
    const loop = fromAISDK({ model, tools: { weather: weatherTool(), slow } });
    agent = adapter(loop, { cancelGraceMs: 50 });
    const first = await agent.runTurn('Go');
    expect(first.outcome).toBe('cancelled');
    const tools = loop.messages.filter((m) => m.role === 'tool');
    expect(toolResults(tools as never)).toEqual([
      ['fast', 'json', { city: 'Oslo', celsius: 21 }],
      ['slow', 'error-text', expect.stringMatching(/^interrupted: /)],
    ]);
    const second = await agent.runTurn('Again');
    expect(second).toMatchObject({ outcome: 'end_of_turn', text: 'Second turn works.' });
  });

  it('stopped by a budget: the unrun call is settled and a later turn on the same loop is valid', async () => {
    const log: string[] = [];
    const model = scriptedModel([
      { content: [call('a', 'weather', { city: 'Oslo' }), call('b', 'weather', { city: 'Rome' })] },
      { content: [text('Fine.')] },
    ]);
    const loop = fromAISDK({ model, tools: { weather: weatherTool(log) } });
    const first = await adapter(loop, { budget: { maxToolCalls: 1 } }).runTurn('Two cities');
    expect(first.outcome).toBe('budget_exceeded');
    expect(log.length).toBeLessThanOrEqual(1);
    const answered = toolResults(loop.messages.filter((m) => m.role === 'tool') as never);
    expect(answered.map(([id]) => id)).toEqual(['a', 'b']);
    const second = await adapter(loop).runTurn('Go on');
    expect(second).toMatchObject({ outcome: 'end_of_turn', text: 'Fine.' });
  });

  it('a 429 APICallError is retried by the adapter alone, after its Retry-After', async () => {
    const model = scriptedModel([
      { error: apiError(429, { 'retry-after': '3' }, true) },
      { content: [text('Made it.')] },
    ]);
    const delays: number[] = [];
    const agent = adapter(fromAISDK({ model }), { sleep: (ms) => (delays.push(ms), Promise.resolve()) });
    const result = await agent.runTurn('Hi');
    expect(result).toMatchObject({ outcome: 'end_of_turn', text: 'Made it.' });
    // Two model calls in all: the SDK made no retry of its own.
    expect(model.prompts).toHaveLength(2);
    expect(delays).toHaveLength(1);
    expect(delays[0]).toBeGreaterThanOrEqual(3000);
  });

  it('a non-retryable 400 APICallError ends the turn in error after one attempt', async () => {
    const model = scriptedModel([{ error: apiError(400, {}, false) }, { content: [text('never')] }]);
    const loop = fromAISDK({ model });
    const result = await adapter(loop).runTurn('Hi');
    expect(result.outcome).toBe('error');
    expect(result.error?.message).toMatch(/HTTP 400/);
    expect(model.prompts).toHaveLength(1);
    // Nothing of the failed call joined the conversation: a retry or the next turn sends it once.
    expect(loop.messages).toEqual([]);
  });

  it('streams a tool turn: onText gets the deltas with turn and attempt, the result is the same', async () => {
    const model = scriptedModel([
      { content: [text('Checking.'), call('c1', 'weather', { city: 'Oslo' })], usage: { input: 40, output: 8 } },
      { content: [text('Sunny.')] },
    ]);
    const deltas: Array<[string, number, number]> = [];
    const loop = fromAISDK({
      model,
      tools: { weather: weatherTool() },
      stream: { onText: (d, { turn, attempt }) => deltas.push([d, turn, attempt]) },
    });
    const result = await adapter(loop).runTurn('Weather?');
    expect(result).toMatchObject({ outcome: 'end_of_turn', text: 'Sunny.' });
    expect(result.usage).toMatchObject({ inputTokens: 50, outputTokens: 13, llmCalls: 2, toolCalls: 1 });
    expect(deltas.map(([d]) => d).join('')).toBe('Checking.Sunny.');
    expect(deltas.length).toBe(4);
    expect(deltas.every(([, turn, attempt]) => turn === 1 && attempt === 1)).toBe(true);
    expect(model.doStreamCalls).toHaveLength(2);
    expect(model.doGenerateCalls).toHaveLength(0);
  });

  it('streaming: an APICallError inside the stream is thrown to the adapter', async () => {
    const model = scriptedModel([{ error: apiError(400, {}, false) }]);
    const result = await adapter(fromAISDK({ model, stream: true })).runTurn('Hi');
    expect(result.outcome).toBe('error');
    expect(result.error?.message).toMatch(/HTTP 400/);
  });

  it('streaming: a stream dropped mid-way is retried, and onText sees the new attempt start over', async () => {
    const usage = {
      inputTokens: { total: 5, noCache: 5, cacheRead: undefined, cacheWrite: undefined },
      outputTokens: { total: 2, text: 2, reasoning: undefined },
    };
    let calls = 0;
    const model = new MockLanguageModelV3({
      doStream: async () => {
        calls += 1;
        const parts = [
          { type: 'stream-start' as const, warnings: [] },
          { type: 'text-start' as const, id: 't' },
          { type: 'text-delta' as const, id: 't', delta: 'Hel' },
          ...(calls === 1
            ? [{ type: 'error' as const, error: new Error('socket hang up') }]
            : [
                { type: 'text-delta' as const, id: 't', delta: 'lo.' },
                { type: 'text-end' as const, id: 't' },
                { type: 'finish' as const, finishReason: { unified: 'stop' as const, raw: 'stop' }, usage },
              ]),
        ];
        return { stream: convertArrayToReadableStream(parts) };
      },
    });
    const seen: Array<[string, number]> = [];
    const loop = fromAISDK({ model, stream: { onText: (delta, { attempt }) => seen.push([delta, attempt]) } });
    const result = await adapter(loop).runTurn('Hi');
    expect(result).toMatchObject({ outcome: 'end_of_turn', text: 'Hello.' });
    expect(seen).toEqual([
      ['Hel', 1],
      ['Hel', 2],
      ['lo.', 2],
    ]);
    expect(loop.messages).toHaveLength(2);
  });

  it(".runTool() sends a tool's result through its toModelOutput", async () => {
    const model = scriptedModel([{ content: [call('c1', 'shot', {})] }, { content: [text('Nice picture.')] }]);
    const shot = tool({
      inputSchema: z.object({}),
      execute: async () => ({ width: 2, height: 1 }),
      toModelOutput: ({ output }) => ({ type: 'text', value: `an image of ${output.width}x${output.height}` }),
    });
    const loop = fromAISDK({ model, tools: { shot } });
    expect((await adapter(loop).runTurn('Take one')).outcome).toBe('end_of_turn');
    expect(toolResults(model.prompts[1]!)).toEqual([['c1', 'text', 'an image of 2x1']]);
  });

  it('.runTool() turns a throwing execute into an error result and the turn goes on', async () => {
    const model = scriptedModel([{ content: [call('c1', 'boom', {})] }, { content: [text('It failed.')] }]);
    const boom = tool({
      inputSchema: z.object({}),
      execute: async (): Promise<string> => {
        throw new Error('disk full');
      },
    });
    const loop = fromAISDK({ model, tools: { boom } });
    expect((await adapter(loop).runTurn('Try')).outcome).toBe('end_of_turn');
    const [sent] = toolResults(model.prompts[1]!);
    expect(sent?.slice(0, 2)).toEqual(['c1', 'error-text']);
    expect(sent?.[2]).toMatch(/disk full/);
  });

  it('a maxWallMs deadline aborts a stalled step through its abort signal; nothing of it is kept', async () => {
    const model = scriptedModel([{ hang: true }, { content: [text('Back.')] }]);
    const loop = fromAISDK({ model });
    const first = await adapter(loop, { budget: { maxWallMs: 30 }, cancelGraceMs: 1000 }).runTurn('Hi');
    expect(first.outcome).toBe('budget_exceeded');
    expect(model.doGenerateCalls[0]?.abortSignal?.aborted).toBe(true);
    expect(loop.messages).toEqual([]);
    expect(await adapter(loop).runTurn('Hi again')).toMatchObject({ outcome: 'end_of_turn', text: 'Back.' });
  });

  it('shares one budget across loops like any AgentLoop', async () => {
    const shared = new Budget({ maxLlmCalls: 1 });
    const model = scriptedModel([{ content: [call('a', 'weather', { city: 'Oslo' })] }]);
    const result = await adapter(fromAISDK({ model, tools: { weather: weatherTool() } }), {
      sharedBudgets: [shared],
    }).runTurn('Hi');
    expect(result.outcome).toBe('budget_exceeded');
  });

  it('passes the model id the provider answered with, so the adapter prices the step', async () => {
    const model = scriptedModel([
      {
        content: [text('ok')],
        usage: { input: 1_000_000, output: 100_000, cacheRead: 400_000 },
        modelId: 'gpt-x-2026',
      },
    ]);
    const seen: Array<[string | undefined, number | undefined]> = [];
    const pricing = (
      usage: {
        inputTokens?: number | undefined;
        cachedInputTokens?: number | undefined;
        outputTokens?: number | undefined;
      },
      { model: id }: { model: string | undefined },
    ) => {
      seen.push([id, usage.cachedInputTokens]);
      // $1/M fresh input, $0.10/M cached, $4/M output.
      return id === 'gpt-x-2026'
        ? ((usage.inputTokens! - usage.cachedInputTokens!) * 1 +
            usage.cachedInputTokens! * 0.1 +
            usage.outputTokens! * 4) /
            1e6
        : undefined;
    };
    const result = await adapter(fromAISDK({ model }), { budget: { maxCostUsd: 5, strict: false }, pricing }).runTurn(
      'Hi',
    );
    expect(result.outcome).toBe('end_of_turn');
    expect(seen).toEqual([['gpt-x-2026', 400_000]]);
    expect(result.usage.costUsd).toBeCloseTo(0.6 + 0.04 + 0.4, 10);
  });

  it('a step of unknown cost under a dollar cap ends the turn, naming the model', async () => {
    const model = scriptedModel([{ content: [text('ok')], modelId: 'unpriced-model' }]);
    const result = await adapter(fromAISDK({ model }), { budget: { maxCostUsd: 1, strict: false } }).runTurn('Hi');
    expect(result.outcome).toBe('error');
    expect(result.error?.message).toContain('unpriced-model');
  });

  it('rejects bad options by name', () => {
    expect(() => fromAISDK(undefined as never)).toThrow(InvalidArgumentError);
    expect(() => fromAISDK({ model: 42 as never })).toThrow(/`model`/);
    expect(() => fromAISDK({ model: scriptedModel([]), tools: { w: { description: 'no schema' } as never } })).toThrow(
      /`tools.w.inputSchema`/,
    );
    expect(() => fromAISDK({ model: scriptedModel([]), callSettings: { maxRetries: 3 } as never })).toThrow(
      /`callSettings.maxRetries`/,
    );
    expect(() =>
      fromAISDK({ model: scriptedModel([]), callSettings: { toolApproval: { w: 'denied' } } as never }),
    ).toThrow(/`callSettings.toolApproval`/);
    expect(() => fromAISDK({ model: scriptedModel([]), stream: 'yes' as never })).toThrow(/`stream`/);
    expect(() =>
      fromAISDK({
        model: scriptedModel([]),
        tools: { w: tool({ inputSchema: z.object({}), needsApproval: true, execute: async () => 'x' }) },
      }),
    ).toThrow(/needsApproval/);
  });
});
