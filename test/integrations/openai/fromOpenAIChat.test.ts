import OpenAI from 'openai';
import { AgentWithStateMachine, InvalidArgumentError } from 'agent-state-machine';
import { fromOpenAIChat, type OpenAIChatOptions } from '../../../lib/integrations/openai';
import {
  checkChatRequest,
  startOpenAIChatServer,
  type ChatAction,
  type OpenAIChatServer,
  type OpenAIChatServerOptions,
} from '../../../examples/servers/openaiChatServer';
import { agentOf, readFile, recordingSleep } from '../../helpers/sdkLoopTest';

// The real `openai` client against a local server that speaks Chat Completions and rejects
// what the API rejects. Every scenario ends by asserting the server rejected nothing.

let server: OpenAIChatServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function serve(script: ChatAction[] | OpenAIChatServerOptions['respond']): Promise<OpenAIChatServer> {
  server = await startOpenAIChatServer({
    respond:
      typeof script === 'function'
        ? script
        : (_body, i) => script[i] ?? { error: { status: 500, message: `script has no reply ${i}` } },
  });
  return server;
}

function client(s: OpenAIChatServer): OpenAI {
  return new OpenAI({ apiKey: 'sk-local', baseURL: s.baseURL });
}

const base = (extra: Partial<OpenAIChatOptions> = {}): OpenAIChatOptions => ({
  model: 'gpt-4o-mini',
  tools: { read_file: readFile },
  system: 'You are terse.',
  ...extra,
});

describe('fromOpenAIChat', () => {
  it('runs a full tool-use turn and keeps the conversation in the Chat Completions format', async () => {
    const s = await serve([
      {
        content: null as unknown as undefined,
        toolCalls: [{ id: 'call_1', name: 'read_file', arguments: '{"path":"a.txt"}' }],
        usage: {
          prompt_tokens: 100,
          completion_tokens: 20,
          prompt_tokens_details: { cached_tokens: 60 },
          completion_tokens_details: { reasoning_tokens: 8 },
        },
        model: 'gpt-4o-mini-2024-07-18',
      },
      { content: 'a.txt says hello', usage: { prompt_tokens: 140, completion_tokens: 5 } },
    ]);
    const loop = fromOpenAIChat(client(s), base());
    const result = await agentOf(loop).runTurn('What is in a.txt?');

    expect(result).toMatchObject({ outcome: 'end_of_turn', text: 'a.txt says hello' });
    expect(result.usage).toMatchObject({ inputTokens: 240, outputTokens: 25, llmCalls: 2, toolCalls: 1 });
    expect(loop.messages).toEqual([
      { role: 'system', content: 'You are terse.' },
      { role: 'user', content: 'What is in a.txt?' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: 'call_1', type: 'function', function: { name: 'read_file', arguments: '{"path":"a.txt"}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'call_1', content: 'contents of a.txt' },
      { role: 'assistant', content: 'a.txt says hello' },
    ]);
    expect(JSON.parse(JSON.stringify(loop.messages))).toEqual(loop.messages);
    const first = s.exchanges[0]!.body;
    expect(first.tools).toEqual([
      {
        type: 'function',
        function: { name: 'read_file', description: 'Reads a file', parameters: readFile.parameters },
      },
    ]);
    expect(first.model).toBe('gpt-4o-mini');
    expect(s.rejected).toEqual([]);
  });

  it('reads its tools record at every request: a tool added or removed in place reaches the next request', async () => {
    const s = await serve([{ content: 'one' }, { content: 'two' }]);
    const tools: OpenAIChatOptions['tools'] = { read_file: readFile };
    const agent = agentOf(fromOpenAIChat(client(s), base({ tools })));
    await agent.runTurn('first');
    tools.list_files = { parameters: { type: 'object' }, run: () => 'a.txt' };
    delete tools.read_file;
    await agent.runTurn('second');
    const names = s.exchanges.map((e) => e.body.tools.map((t: { function: { name: string } }) => t.function.name));
    expect(names).toEqual([['read_file'], ['list_files']]);
    expect(s.rejected).toEqual([]);
  });

  it('.sendUserMessage() maps usage fully, with the model and the finish reason', async () => {
    const s = await serve([
      {
        content: 'hi',
        usage: {
          prompt_tokens: 1000,
          completion_tokens: 300,
          prompt_tokens_details: { cached_tokens: 600, cache_write_tokens: 100 },
          completion_tokens_details: { reasoning_tokens: 200 },
          cost: 0.0042,
        },
        model: 'gpt-4o-mini-2024-07-18',
        finishReason: 'length',
      },
    ]);
    const loop = fromOpenAIChat(client(s), base({ maxTokens: 300, request: { temperature: 0 } }));
    const response = await loop.sendUserMessage('hello', { signal: new AbortController().signal, turn: 1, attempt: 1 });
    expect(response).toEqual({
      text: 'hi',
      usage: {
        inputTokens: 1000,
        outputTokens: 300,
        cachedInputTokens: 600,
        cacheWriteTokens: 100,
        reasoningTokens: 200,
        costUsd: 0.0042,
      },
      model: 'gpt-4o-mini-2024-07-18',
      finishReason: 'length',
    });
    expect(s.exchanges[0]!.body).toMatchObject({ max_completion_tokens: 300, temperature: 0 });
  });

  it('runs parallel tool calls and answers each in call order', async () => {
    const s = await serve([
      {
        toolCalls: [
          { id: 'call_a', name: 'read_file', arguments: '{"path":"a"}' },
          { id: 'call_b', name: 'read_file', arguments: '{"path":"b"}' },
          { id: 'call_c', name: 'read_file', arguments: '{"path":"c"}' },
        ],
      },
      { content: 'done' },
    ]);
    // The three run at once (toolConcurrency), each waiting until all three have started.
    let running = 0;
    let peak = 0;
    let release!: () => void;
    const allStarted = new Promise<void>((r) => (release = r));
    const read = {
      ...readFile,
      run: async (input: { path: string }) => {
        peak = Math.max(peak, ++running);
        if (peak === 3) release();
        await allStarted;
        running -= 1;
        return `contents of ${input.path}`;
      },
    };
    const loop = fromOpenAIChat(client(s), base({ tools: { read_file: read } }));
    const result = await agentOf(loop, { toolConcurrency: 3 }).runTurn('read three');
    expect(result.outcome).toBe('end_of_turn');
    expect(peak).toBe(3);
    const second = s.exchanges[1]!.body.messages;
    expect(second.slice(-3)).toEqual([
      { role: 'tool', tool_call_id: 'call_a', content: 'contents of a' },
      { role: 'tool', tool_call_id: 'call_b', content: 'contents of b' },
      { role: 'tool', tool_call_id: 'call_c', content: 'contents of c' },
    ]);
    expect(s.rejected).toEqual([]);
  });

  it('.runTool() sends bad JSON and unknown tools back to the LLM as error results; the turn goes on', async () => {
    const s = await serve([
      {
        toolCalls: [
          { id: 'call_bad', name: 'read_file', arguments: '{"path": "a.txt"' },
          { id: 'call_unknown', name: 'delete_everything', arguments: '{}' },
          { id: 'call_empty', name: 'list', arguments: '' },
        ],
      },
      { content: 'sorry' },
    ]);
    const seen: unknown[] = [];
    const list = {
      parameters: { type: 'object', properties: {} },
      run: (input: unknown) => (seen.push(input), 'a.txt'),
    };
    const loop = fromOpenAIChat(client(s), base({ tools: { read_file: readFile, list } }));
    const result = await agentOf(loop).runTurn('go');
    expect(result).toMatchObject({ outcome: 'end_of_turn', text: 'sorry' });
    expect(result.usage.llmCalls).toBe(2);
    const tools = s.exchanges[1]!.body.messages.filter((m: { role: string }) => m.role === 'tool');
    expect(tools[0].content).toMatch(/^error: the arguments of read_file are not valid JSON/);
    expect(tools[1].content).toBe('error: there is no tool named "delete_everything"; the tools are: read_file, list');
    expect(tools[2].content).toBe('a.txt');
    expect(seen).toEqual([{}]);
    expect(s.rejected).toEqual([]);
  });

  it(".runTool() answers arguments that break the input schema with the validator's message, once, and never runs the tool", async () => {
    const s = await serve([
      {
        toolCalls: [
          { id: 'call_num', name: 'read_file', arguments: '{"path": 42}' },
          { id: 'call_missing', name: 'read_file', arguments: '{"file": "a.txt"}' },
          { id: 'call_ok', name: 'read_file', arguments: '{"path": "a.txt"}' },
        ],
      },
      { content: 'done' },
    ]);
    const ran: unknown[] = [];
    const loop = fromOpenAIChat(
      client(s),
      base({
        tools: {
          read_file: { ...readFile, run: async (input: { path: string }) => (ran.push(input), readFile.run(input)) },
        },
      }),
    );
    expect(await agentOf(loop).runTurn('go')).toMatchObject({ outcome: 'end_of_turn', text: 'done' });
    expect(ran).toEqual([{ path: 'a.txt' }]);
    const tools = s.exchanges[1]!.body.messages.filter((m: { role: string }) => m.role === 'tool');
    expect(tools.map((m: { content: string }) => m.content)).toEqual([
      'error: the arguments of read_file do not match its input schema: input.path must be string; send them again, corrected',
      "error: the arguments of read_file do not match its input schema: input must have required property 'path'; send them again, corrected",
      'contents of a.txt',
    ]);
    expect(s.rejected).toEqual([]);
  });

  it('gives empty and repeated tool-call ids unique ones, so every call is answered and the next requests are valid', async () => {
    const s = await serve([
      {
        toolCalls: [
          { id: '', name: 'read_file', arguments: '{"path":"a"}' },
          { id: 'x', name: 'read_file', arguments: '{"path":"b"}' },
          { id: 'x', name: 'read_file', arguments: '{"path":"c"}' },
        ],
      },
      { content: 'read three' },
      { content: 'second turn' },
    ]);
    const loop = fromOpenAIChat(client(s), base());
    const agent = agentOf(loop);
    expect(await agent.runTurn('read a, b and c')).toMatchObject({ outcome: 'end_of_turn', text: 'read three' });
    expect(await agent.runTurn('again')).toMatchObject({ outcome: 'end_of_turn', text: 'second turn' });
    const assistant = loop.messages.find((m) => m.role === 'assistant' && m.tool_calls !== undefined) as {
      tool_calls: { id: string }[];
    };
    const ids = assistant.tool_calls.map((c) => c.id);
    expect(ids).toEqual(['call_asm1', 'x', 'call_asm2']);
    expect(
      loop.messages
        .filter((m) => m.role === 'tool')
        .map((m) => [(m as { tool_call_id: string }).tool_call_id, m.content]),
    ).toEqual([
      ['call_asm1', 'contents of a'],
      ['x', 'contents of b'],
      ['call_asm2', 'contents of c'],
    ]);
    expect(s.rejected).toEqual([]);
  });

  it('the strict server rejects the odd ids a loop sends back unchanged', () => {
    const asked = (ids: string[]) => ({
      role: 'assistant',
      content: null,
      tool_calls: ids.map((id) => ({ id, type: 'function', function: { name: 'f', arguments: '{}' } })),
    });
    expect(checkChatRequest({ model: 'm', messages: [{ role: 'user', content: 'x' }, asked([''])] })).toMatch(
      /tool_calls\[0\]\.id': empty string/,
    );
    expect(checkChatRequest({ model: 'm', messages: [{ role: 'user', content: 'x' }, asked(['a', 'a'])] })).toMatch(
      /duplicate tool_call id 'a'/,
    );
  });

  it('commits messages only after a call succeeded, and turns the SDK retries off (500, then success)', async () => {
    const s = await serve([
      { error: { status: 500, message: 'The server had an error while processing your request.' } },
      { content: 'ok' },
    ]);
    const loop = fromOpenAIChat(client(s), base());
    const agent = agentOf(loop, { retry: { retries: 2, baseDelayMs: 10 } });
    const result = await agent.runTurn('hello');
    expect(result).toMatchObject({ outcome: 'end_of_turn', text: 'ok' });
    // Exactly two requests: the SDK did not retry on its own; the adapter did, once.
    expect(s.exchanges).toHaveLength(2);
    expect(s.exchanges[0]!.body.messages).toEqual(s.exchanges[1]!.body.messages);
    expect(loop.messages.filter((m) => m.role === 'user')).toHaveLength(1);
  });

  it('keeps the status and headers of errors, so Retry-After is honoured (429)', async () => {
    const s = await serve([
      {
        error: {
          status: 429,
          message: 'Rate limit reached for gpt-4o-mini',
          type: 'requests',
          code: 'rate_limit_exceeded',
          headers: { 'retry-after': '3' },
        },
      },
      { content: 'ok' },
    ]);
    const sleep = recordingSleep();
    const loop = fromOpenAIChat(client(s), base());
    const agent = new AgentWithStateMachine(loop, { logger: false, sleep, retry: { retries: 2, baseDelayMs: 10 } });
    const result = await agent.runTurn('hello');
    expect(result.outcome).toBe('end_of_turn');
    expect(s.exchanges).toHaveLength(2);
    expect(sleep.delays.some((ms) => ms >= 3000)).toBe(true);
  });

  it('does not retry a 400 the API will give again', async () => {
    const s = await serve([
      {
        error: {
          status: 400,
          message: "This model's maximum context length is 128000 tokens.",
          type: 'invalid_request_error',
          code: 'context_length_exceeded',
        },
      },
      { content: 'never' },
    ]);
    const loop = fromOpenAIChat(client(s), base());
    const result = await agentOf(loop).runTurn('hello');
    expect(result.outcome).toBe('error');
    expect(result.error?.message).toMatch(/maximum context length/);
    expect((result.error?.cause as { status?: number }).status).toBe(400);
    expect(s.exchanges).toHaveLength(1);
    expect(loop.messages).toEqual([{ role: 'system', content: 'You are terse.' }]);
  });

  it('cancelled mid-tool: the finished tool keeps its result, the conversation stays valid, the next turn works', async () => {
    let started!: () => void;
    const toolStarted = new Promise<void>((r) => (started = r));
    const signals: AbortSignal[] = [];
    const slow = {
      parameters: { type: 'object', properties: {} },
      run: (_input: unknown, ctx: { signal: AbortSignal }) =>
        new Promise<string>((_resolve, reject) => {
          signals.push(ctx.signal);
          started();
          ctx.signal.addEventListener('abort', () => reject(new Error('aborted')), { once: true });
        }),
    };
    const s = await serve([
      {
        toolCalls: [
          { id: 'call_fast', name: 'read_file', arguments: '{"path":"a"}' },
          { id: 'call_slow', name: 'slow', arguments: '{}' },
          { id: 'call_never', name: 'read_file', arguments: '{"path":"b"}' },
        ],
      },
      { content: 'second turn fine' },
    ]);
    const loop = fromOpenAIChat(client(s), base({ tools: { read_file: readFile, slow } }));
    const agent = agentOf(loop, { cancelGraceMs: 50 });
    const turn = agent.runTurn('start');
    await toolStarted;
    agent.cancel('user pressed Esc');
    const first = await turn;
    expect(first.outcome).toBe('cancelled');
    expect(signals[0]!.aborted).toBe(true);
    const tools = loop.messages.filter((m) => m.role === 'tool') as { tool_call_id: string; content: string }[];
    expect(tools.map((m) => m.tool_call_id)).toEqual(['call_fast', 'call_slow', 'call_never']);
    expect(tools[0]!.content).toBe('contents of a');
    expect(tools[1]!.content).toMatch(/interrupted/);
    // The adapter says why each unfinished call has no real result.
    expect(tools[2]!.content).toMatch(/^(interrupted|not run): user pressed Esc/);

    const second = await agent.runTurn('again');
    expect(second).toMatchObject({ outcome: 'end_of_turn', text: 'second turn fine' });
    expect(s.rejected).toEqual([]);
  });

  it('stopped by a budget mid-turn: the tool calls are settled and a turn with a fresh budget succeeds', async () => {
    const s = await serve([
      {
        toolCalls: [
          { id: 'call_1', name: 'read_file', arguments: '{"path":"a"}' },
          { id: 'call_2', name: 'read_file', arguments: '{"path":"b"}' },
        ],
      },
      { content: 'next turn fine' },
    ]);
    const loop = fromOpenAIChat(client(s), base());
    const first = await agentOf(loop, { budget: { maxToolCalls: 1 } }).runTurn('two files, budget for one');
    expect(first.outcome).toBe('budget_exceeded');
    expect(loop.messages.slice(-2)).toEqual([
      { role: 'tool', tool_call_id: 'call_1', content: 'contents of a' },
      {
        role: 'tool',
        tool_call_id: 'call_2',
        content: expect.stringMatching(/^not run: budget exceeded: 1 tool call of 1 tool call/),
      },
    ]);
    // The loop outlives the adapter: continue the same conversation under a new budget.
    const second = await agentOf(loop, { budget: { maxToolCalls: 1 } }).runTurn('cheap');
    expect(second).toMatchObject({ outcome: 'end_of_turn', text: 'next turn fine' });
    expect(s.rejected).toEqual([]);
  });

  it('.settleToolCalls() answers every tool call, so the next request is valid', async () => {
    const s = await serve([
      {
        toolCalls: [
          { id: 'call_1', name: 'read_file', arguments: '{"path":"a"}' },
          { id: 'call_2', name: 'read_file', arguments: '{"path":"b"}' },
        ],
      },
      { content: 'fine' },
    ]);
    const loop = fromOpenAIChat(client(s), base());
    const ctx = { signal: new AbortController().signal, turn: 1, attempt: 1 };
    await loop.sendUserMessage('start', ctx);
    await loop.settleToolCalls!(
      [
        { callId: 'call_1', output: 'contents of a' },
        { callId: 'call_2', output: 'interrupted: user pressed Esc', isError: true },
      ],
      { outcome: 'cancelled', reason: 'user pressed Esc', turn: 1 },
      ctx,
    );
    expect(await loop.sendUserMessage('again', { ...ctx, turn: 2 })).toMatchObject({ text: 'fine' });
    expect(loop.messages.map((m) => m.role)).toEqual([
      'system',
      'user',
      'assistant',
      'tool',
      'tool',
      'user',
      'assistant',
    ]);
    expect(s.rejected).toEqual([]);
  });

  it('continues a given conversation without modifying it', async () => {
    const s = await serve([{ content: 'continued' }]);
    const earlier = [
      { role: 'user' as const, content: 'first' },
      { role: 'assistant' as const, content: 'first answer' },
    ];
    const loop = fromOpenAIChat(client(s), base({ system: undefined, messages: earlier }));
    expect(await agentOf(loop).runTurn('second')).toMatchObject({ outcome: 'end_of_turn', text: 'continued' });
    expect(earlier).toHaveLength(2);
    expect(s.exchanges[0]!.body.messages).toEqual([...earlier, { role: 'user', content: 'second' }]);
  });

  it('cancelled during the LLM call: the request is aborted and nothing is committed', async () => {
    const s = await serve([{ content: 'too late', delayMs: 10_000 }]);
    const loop = fromOpenAIChat(client(s), base());
    const agent = agentOf(loop, { cancelGraceMs: 50 });
    const turn = agent.runTurn('slow');
    while (s.exchanges.length === 0) await new Promise((r) => setTimeout(r, 5));
    agent.cancel('stop');
    expect((await turn).outcome).toBe('cancelled');
    expect(loop.messages).toEqual([{ role: 'system', content: 'You are terse.' }]);
  });

  it('streams with usage (stream_options.include_usage) and tells onText the turn and attempt', async () => {
    const s = await serve([
      {
        toolCalls: [{ id: 'call_1', name: 'read_file', arguments: '{"path":"streamed.txt"}' }],
        usage: { prompt_tokens: 10, completion_tokens: 4 },
      },
      {
        content: 'The file says: contents of streamed.txt',
        usage: { prompt_tokens: 30, completion_tokens: 9, prompt_tokens_details: { cached_tokens: 10 } },
        model: 'gpt-4o-mini-2024-07-18',
      },
    ]);
    const deltas: [string, number, number][] = [];
    const loop = fromOpenAIChat(
      client(s),
      base({ stream: { onText: (d, { turn, attempt }) => deltas.push([d, turn, attempt]) } }),
    );
    const result = await agentOf(loop).runTurn('stream it');
    expect(result).toMatchObject({ outcome: 'end_of_turn', text: 'The file says: contents of streamed.txt' });
    expect(result.usage).toMatchObject({ inputTokens: 40, outputTokens: 13 });
    expect(s.exchanges.every((e) => e.stream && e.body.stream_options?.include_usage === true)).toBe(true);
    expect(deltas.map((d) => d[0]).join('')).toBe('The file says: contents of streamed.txt');
    expect(deltas.every(([, turn, attempt]) => turn === 1 && attempt === 1)).toBe(true);
    expect(s.rejected).toEqual([]);
  });

  it('retries a stream dropped mid-way; onText sees the new attempt and the conversation gets one answer', async () => {
    const s = await serve([
      { content: 'Hello there, partial answer', dropAfterChunks: 3 },
      { content: 'Hello again, whole answer' },
    ]);
    const deltas: [string, number][] = [];
    const loop = fromOpenAIChat(client(s), base({ stream: { onText: (d, { attempt }) => deltas.push([d, attempt]) } }));
    const result = await agentOf(loop, { retry: { retries: 2, baseDelayMs: 10 } }).runTurn('hi');
    expect(result).toMatchObject({ outcome: 'end_of_turn', text: 'Hello again, whole answer' });
    expect(deltas.filter(([, a]) => a === 1).length).toBeGreaterThan(0);
    expect(
      deltas
        .filter(([, a]) => a === 2)
        .map(([d]) => d)
        .join(''),
    ).toBe('Hello again, whole answer');
    expect(loop.messages.filter((m) => m.role === 'assistant')).toEqual([
      { role: 'assistant', content: 'Hello again, whole answer' },
    ]);
    expect(s.exchanges).toHaveLength(2);
  });

  it('a response without usage under maxCostUsd ends the turn in Error instead of charging $0', async () => {
    const s = await serve([{ content: 'free?', usage: null }]);
    const loop = fromOpenAIChat(client(s), base());
    const result = await agentOf(loop, { budget: { maxCostUsd: 1, strict: false } }).runTurn('hi');
    expect(result.outcome).toBe('error');
    expect(result.error?.message).toMatch(/cost/);
  });

  it('throws InvalidArgumentError naming a bad option', () => {
    const c = new OpenAI({ apiKey: 'x', baseURL: 'http://127.0.0.1:9/v1' });
    expect(() => fromOpenAIChat(c, { model: '' })).toThrow(InvalidArgumentError);
    expect(() => fromOpenAIChat(c, { model: 'm', tools: { t: { parameters: {}, run: 5 as never } } })).toThrow(
      'Expected `options.tools.t.run` to be a function',
    );
    expect(() => fromOpenAIChat(c, { model: 'm', stream: 'yes' as never })).toThrow('options.stream');
    expect(() => fromOpenAIChat({} as never, { model: 'm' })).toThrow('Expected `client` to be an OpenAI client');
    // A schema no validator can compile is an error of the options, named, not of a later turn.
    expect(() =>
      fromOpenAIChat(c, {
        model: 'm',
        tools: { t: { parameters: { type: 'object', properties: { a: { type: 'strng' } } }, run: () => '' } },
      }),
    ).toThrow(
      /^Expected `options.tools.t.parameters` to be a JSON Schema a validator can compile \(schema is invalid: data\/properties\/a\/type must be equal to one of the allowed values/,
    );
  });
});

describe('checkChatRequest (the local server)', () => {
  it('rejects what the API rejects', () => {
    const call = { id: 'call_1', type: 'function', function: { name: 'f', arguments: '{}' } };
    expect(
      checkChatRequest({
        model: 'm',
        messages: [
          { role: 'user', content: 'x' },
          { role: 'assistant', content: null, tool_calls: [call] },
          { role: 'user', content: 'y' },
        ],
      }),
    ).toMatch(/must be followed by tool messages responding to each 'tool_call_id'.*call_1/);
    expect(
      checkChatRequest({
        model: 'm',
        messages: [
          { role: 'user', content: 'x' },
          { role: 'assistant', content: null, tool_calls: [call] },
        ],
      }),
    ).toMatch(/call_1/);
    expect(
      checkChatRequest({
        model: 'm',
        messages: [
          { role: 'user', content: 'x' },
          { role: 'tool', tool_call_id: 'call_9', content: 'r' },
        ],
      }),
    ).toMatch(/must be a response to a preceeding message/);
    expect(
      checkChatRequest({
        model: 'm',
        messages: [{ role: 'user', content: 'x' }],
        stream_options: { include_usage: true },
      }),
    ).toMatch(/only allowed when 'stream' is enabled/);
    expect(
      checkChatRequest({
        model: 'm',
        messages: [
          { role: 'user', content: 'x' },
          { role: 'assistant', content: null, tool_calls: [call] },
          { role: 'tool', tool_call_id: 'call_1', content: 'r' },
        ],
      }),
    ).toBeUndefined();
  });
});

describe('fromOpenAIChat: an answer with no choices', () => {
  it('ends the turn in an error, billed at the usage it reports (never released as unbilled)', async () => {
    const body = {
      id: 'chatcmpl-1',
      object: 'chat.completion',
      created: 0,
      model: 'gpt-local',
      choices: [],
      usage: { prompt_tokens: 10, completion_tokens: 0, total_tokens: 10 },
    };
    const fetch = (async () =>
      new Response(JSON.stringify(body), {
        headers: { 'content-type': 'application/json' },
      })) as typeof globalThis.fetch;
    const loop = fromOpenAIChat(new OpenAI({ apiKey: 'k', fetch }), { model: 'gpt-local', maxTokens: 100 });
    const result = await agentOf(loop, { pricing: (u) => (u.inputTokens ?? 0) * 1e-6, retry: { retries: 0 } }).runTurn(
      'hi',
    );
    expect(result.error?.message).toMatch(/has no choices/);
    expect(result.usage).toMatchObject({
      llmCalls: 1,
      inputTokens: 10,
      outputTokens: 0,
      costUsd: 0.00001,
      uncertainUsd: 0,
    });
  });
});
