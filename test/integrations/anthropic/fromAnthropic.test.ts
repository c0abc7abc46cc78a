import Anthropic from '@anthropic-ai/sdk';
import { AgentWithStateMachine, InvalidArgumentError } from 'agent-state-machine';
import { fromAnthropic, mapAnthropicUsage, type AnthropicOptions } from '../../../lib/integrations/anthropic';
import {
  checkMessagesRequest,
  startAnthropicMessagesServer,
  type AnthropicMessagesServer,
  type MessagesAction,
} from '../../../examples/servers/anthropicMessagesServer';
import { agentOf, readFile, recordingSleep } from '../../helpers/sdkLoopTest';

// The real `@anthropic-ai/sdk` client against a local server that speaks Messages and rejects
// what the API rejects. Every scenario that continues a conversation asserts nothing was rejected.

let server: AnthropicMessagesServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function serve(script: MessagesAction[]): Promise<AnthropicMessagesServer> {
  server = await startAnthropicMessagesServer({
    respond: (_body, i) =>
      script[i] ?? { error: { status: 500, type: 'api_error', message: `script has no reply ${i}` } },
  });
  return server;
}

const client = (s: AnthropicMessagesServer): Anthropic => new Anthropic({ apiKey: 'sk-ant-local', baseURL: s.baseURL });

const base = (extra: Partial<AnthropicOptions> = {}): AnthropicOptions => ({
  model: 'claude-sonnet-4-6',
  tools: { read_file: readFile },
  system: 'You are terse.',
  ...extra,
});

describe('fromAnthropic', () => {
  it('runs a full tool-use turn and keeps the conversation in the Messages format', async () => {
    const s = await serve([
      {
        text: 'Reading it.',
        toolUses: [{ id: 'toolu_1', name: 'read_file', input: { path: 'a.txt' } }],
        usage: { input_tokens: 100, output_tokens: 20 },
      },
      { text: 'a.txt says hello', usage: { input_tokens: 140, output_tokens: 5 } },
    ]);
    const loop = fromAnthropic(client(s), base());
    const result = await agentOf(loop).runTurn('What is in a.txt?');
    expect(result).toMatchObject({ outcome: 'end_of_turn', text: 'a.txt says hello' });
    expect(result.usage).toMatchObject({ inputTokens: 240, outputTokens: 25, llmCalls: 2, toolCalls: 1 });
    expect(loop.messages).toEqual([
      { role: 'user', content: 'What is in a.txt?' },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'Reading it.' },
          { type: 'tool_use', id: 'toolu_1', name: 'read_file', input: { path: 'a.txt' } },
        ],
      },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'contents of a.txt' }] },
      { role: 'assistant', content: [{ type: 'text', text: 'a.txt says hello' }] },
    ]);
    expect(JSON.parse(JSON.stringify(loop.messages))).toEqual(loop.messages);
    expect(s.exchanges[0]!.body).toMatchObject({
      model: 'claude-sonnet-4-6',
      max_tokens: 4096,
      system: 'You are terse.',
      tools: [{ name: 'read_file', description: 'Reads a file', input_schema: readFile.parameters }],
    });
    expect(s.rejected).toEqual([]);
  });

  it('reads its tools record at every request: a tool added or removed in place reaches the next request', async () => {
    const s = await serve([{ text: 'one' }, { text: 'two' }]);
    const tools: AnthropicOptions['tools'] = { read_file: readFile };
    const agent = agentOf(fromAnthropic(client(s), base({ tools })));
    await agent.runTurn('first');
    tools.list_files = { parameters: { type: 'object' }, run: () => 'a.txt' };
    delete tools.read_file;
    await agent.runTurn('second');
    expect(s.exchanges.map((e) => e.body.tools.map((t: { name: string }) => t.name))).toEqual([
      ['read_file'],
      ['list_files'],
    ]);
    expect(s.rejected).toEqual([]);
  });

  it('sends a failure the tool reports as { output, isError: true } as an error tool_result', async () => {
    const s = await serve([
      { toolUses: [{ id: 'toolu_1', name: 'read_file', input: { path: 'a.txt' } }] },
      { text: 'It is missing.' },
    ]);
    const missing = {
      ...readFile,
      run: async (input: { path: string }) => ({ output: `${input.path}: no such file`, isError: true }),
    };
    const loop = fromAnthropic(client(s), base({ tools: { read_file: missing } }));
    const result = await agentOf(loop).runTurn('What is in a.txt?');
    expect(result).toMatchObject({ outcome: 'end_of_turn', text: 'It is missing.' });
    expect(loop.messages[2]).toEqual({
      role: 'user',
      content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'a.txt: no such file', is_error: true }],
    });
    expect(s.rejected).toEqual([]);
  });

  it('.sendUserMessage() maps usage fully (cache reads and writes are part of inputTokens), with the model and the stop reason', async () => {
    const s = await serve([
      {
        text: 'hi',
        usage: {
          input_tokens: 50,
          output_tokens: 300,
          cache_read_input_tokens: 800,
          cache_creation_input_tokens: 150,
          output_tokens_details: { thinking_tokens: 120 },
        },
        model: 'claude-sonnet-4-6',
        stopReason: 'max_tokens',
      },
    ]);
    const loop = fromAnthropic(client(s), base({ maxTokens: 300, request: { temperature: 0 } }));
    const response = await loop.sendUserMessage('hello', { signal: new AbortController().signal, turn: 1, attempt: 1 });
    expect(response).toEqual({
      text: 'hi',
      usage: {
        inputTokens: 1000,
        outputTokens: 300,
        cachedInputTokens: 800,
        cacheWriteTokens: 150,
        reasoningTokens: 120,
      },
      model: 'claude-sonnet-4-6',
      finishReason: 'max_tokens',
    });
    expect(s.exchanges[0]!.body).toMatchObject({ max_tokens: 300, temperature: 0 });
    expect(mapAnthropicUsage(undefined)).toBeUndefined();
  });

  it('runs parallel tool calls and answers them all in one user message, in call order', async () => {
    const s = await serve([
      {
        toolUses: [
          { id: 'toolu_a', name: 'read_file', input: { path: 'a' } },
          { id: 'toolu_b', name: 'read_file', input: { path: 'b' } },
        ],
      },
      { text: 'done' },
    ]);
    const loop = fromAnthropic(client(s), base());
    expect((await agentOf(loop).runTurn('two')).outcome).toBe('end_of_turn');
    expect(s.exchanges[1]!.body.messages.at(-1)).toEqual({
      role: 'user',
      content: [
        { type: 'tool_result', tool_use_id: 'toolu_a', content: 'contents of a' },
        { type: 'tool_result', tool_use_id: 'toolu_b', content: 'contents of b' },
      ],
    });
    expect(s.rejected).toEqual([]);
  });

  it('.runTool() sends streamed bad JSON and unknown tools back as error tool_results; the turn goes on', async () => {
    const s = await serve([
      {
        toolUses: [
          { id: 'toolu_bad', name: 'read_file', input: {}, rawJson: '{"path": "a.txt"' },
          { id: 'toolu_unknown', name: 'rm_rf', input: {} },
        ],
      },
      { text: 'sorry' },
    ]);
    const loop = fromAnthropic(client(s), base({ stream: true }));
    const result = await agentOf(loop).runTurn('go');
    expect(result).toMatchObject({ outcome: 'end_of_turn', text: 'sorry' });
    const results = s.exchanges[1]!.body.messages.at(-1).content;
    expect(results[0]).toMatchObject({ tool_use_id: 'toolu_bad', is_error: true });
    expect(results[0].content).toMatch(/^error: the arguments of read_file are not valid JSON/);
    expect(results[1]).toEqual({
      type: 'tool_result',
      tool_use_id: 'toolu_unknown',
      is_error: true,
      content: 'error: there is no tool named "rm_rf"; the tools are: read_file',
    });
    expect(s.rejected).toEqual([]);
  });

  it(".runTool() answers input that breaks the input schema with the validator's message and never runs the tool", async () => {
    const s = await serve([
      { toolUses: [{ id: 'toolu_num', name: 'read_file', input: { path: ['a.txt'] } }] },
      { text: 'done' },
    ]);
    const ran: unknown[] = [];
    const loop = fromAnthropic(
      client(s),
      base({ tools: { read_file: { ...readFile, run: async (input: { path: string }) => (ran.push(input), 'x') } } }),
    );
    expect(await agentOf(loop).runTurn('go')).toMatchObject({ outcome: 'end_of_turn', text: 'done' });
    expect(ran).toEqual([]);
    expect(s.exchanges[1]!.body.messages.at(-1).content).toEqual([
      {
        type: 'tool_result',
        tool_use_id: 'toolu_num',
        is_error: true,
        content:
          'error: the arguments of read_file do not match its input schema: input.path must be string; send them again, corrected',
      },
    ]);
    expect(s.rejected).toEqual([]);
  });

  it('gives empty and repeated tool_use ids unique ones, so every call is answered and the next requests are valid', async () => {
    const s = await serve([
      {
        toolUses: [
          { id: '', name: 'read_file', input: { path: 'a' } },
          { id: 'toolu_x', name: 'read_file', input: { path: 'b' } },
          { id: 'toolu_x', name: 'read_file', input: { path: 'c' } },
        ],
      },
      { text: 'read three' },
      { text: 'second turn' },
    ]);
    const loop = fromAnthropic(client(s), base());
    const agent = agentOf(loop);
    expect(await agent.runTurn('read a, b and c')).toMatchObject({ outcome: 'end_of_turn', text: 'read three' });
    expect(await agent.runTurn('again')).toMatchObject({ outcome: 'end_of_turn', text: 'second turn' });
    const uses = (loop.messages[1]!.content as { type: string; id?: string }[])
      .filter((b) => b.type === 'tool_use')
      .map((b) => b.id);
    expect(uses).toEqual(['toolu_asm1', 'toolu_x', 'toolu_asm2']);
    const answers = (loop.messages[2]!.content as { tool_use_id?: string; content?: string }[]).map((b) => [
      b.tool_use_id,
      b.content,
    ]);
    expect(answers).toEqual([
      ['toolu_asm1', 'contents of a'],
      ['toolu_x', 'contents of b'],
      ['toolu_asm2', 'contents of c'],
    ]);
    expect(s.rejected).toEqual([]);
  });

  it('commits messages only after a call succeeded, and turns the SDK retries off (529 overloaded, then success)', async () => {
    const s = await serve([
      { error: { status: 529, type: 'overloaded_error', message: 'Overloaded' } },
      { error: { status: 500, type: 'api_error', message: 'Internal server error' } },
      { text: 'ok' },
    ]);
    const loop = fromAnthropic(client(s), base());
    const result = await agentOf(loop, { retry: { retries: 2, baseDelayMs: 10 } }).runTurn('hello');
    expect(result).toMatchObject({ outcome: 'end_of_turn', text: 'ok' });
    expect(s.exchanges).toHaveLength(3);
    expect(s.exchanges[0]!.body.messages).toEqual(s.exchanges[2]!.body.messages);
    expect(loop.messages).toEqual([
      { role: 'user', content: 'hello' },
      { role: 'assistant', content: [{ type: 'text', text: 'ok' }] },
    ]);
  });

  it('keeps the status and headers of errors, so retry-after is honoured (429)', async () => {
    const s = await serve([
      {
        error: {
          status: 429,
          type: 'rate_limit_error',
          message: 'Number of request tokens has exceeded your per-minute rate limit',
          headers: { 'retry-after': '4' },
        },
      },
      { text: 'ok' },
    ]);
    const sleep = recordingSleep();
    const loop = fromAnthropic(client(s), base());
    const result = await new AgentWithStateMachine(loop, {
      logger: false,
      sleep,
      retry: { retries: 2, baseDelayMs: 10 },
    }).runTurn('hello');
    expect(result.outcome).toBe('end_of_turn');
    expect(s.exchanges).toHaveLength(2);
    expect(sleep.delays.some((ms) => ms >= 4000)).toBe(true);
  });

  it('does not retry a 400 the API will give again', async () => {
    const s = await serve([
      {
        error: {
          status: 400,
          type: 'invalid_request_error',
          message: 'prompt is too long: 210000 tokens > 200000 maximum',
        },
      },
      { text: 'never' },
    ]);
    const loop = fromAnthropic(client(s), base());
    const result = await agentOf(loop).runTurn('hello');
    expect(result.outcome).toBe('error');
    expect((result.error?.cause as { status?: number }).status).toBe(400);
    expect(s.exchanges).toHaveLength(1);
    expect(loop.messages).toEqual([]);
  });

  it('cancelled mid-tool: every tool_use gets a tool_result and the next turn works', async () => {
    let started!: () => void;
    const toolStarted = new Promise<void>((r) => (started = r));
    let toolSignal: AbortSignal | undefined;
    const slow = {
      parameters: { type: 'object', properties: {} },
      run: (_input: unknown, ctx: { signal: AbortSignal }) =>
        new Promise<string>((_resolve, reject) => {
          toolSignal = ctx.signal;
          started();
          ctx.signal.addEventListener('abort', () => reject(new Error('aborted')), { once: true });
        }),
    };
    const s = await serve([
      {
        toolUses: [
          { id: 'toolu_fast', name: 'read_file', input: { path: 'a' } },
          { id: 'toolu_slow', name: 'slow', input: {} },
          { id: 'toolu_never', name: 'read_file', input: { path: 'b' } },
        ],
      },
      { text: 'second turn fine' },
    ]);
    const loop = fromAnthropic(client(s), base({ tools: { read_file: readFile, slow } }));
    const agent = agentOf(loop, { cancelGraceMs: 50 });
    const turn = agent.runTurn('start');
    await toolStarted;
    agent.cancel('user pressed Esc');
    expect((await turn).outcome).toBe('cancelled');
    expect(toolSignal?.aborted).toBe(true);
    const settled = loop.messages.at(-1)!.content as { tool_use_id: string; content: string; is_error?: boolean }[];
    expect(settled.map((b) => b.tool_use_id)).toEqual(['toolu_fast', 'toolu_slow', 'toolu_never']);
    expect(settled[0]).toMatchObject({ content: 'contents of a' });
    expect(settled[1]).toMatchObject({ is_error: true, content: expect.stringMatching(/interrupted/) });
    expect(settled[2]).toMatchObject({
      is_error: true,
      content: expect.stringMatching(/^(interrupted|not run): user pressed Esc/),
    });
    expect(await agent.runTurn('again')).toMatchObject({ outcome: 'end_of_turn', text: 'second turn fine' });
    expect(s.rejected).toEqual([]);
  });

  it('stopped by a budget mid-turn: the tool_use is answered and a turn with a fresh budget succeeds', async () => {
    const s = await serve([
      {
        toolUses: [
          { id: 'toolu_1', name: 'read_file', input: { path: 'a' } },
          { id: 'toolu_2', name: 'read_file', input: { path: 'b' } },
        ],
      },
      { text: 'next turn fine' },
    ]);
    const loop = fromAnthropic(client(s), base());
    expect((await agentOf(loop, { budget: { maxToolCalls: 1 } }).runTurn('two files, budget for one')).outcome).toBe(
      'budget_exceeded',
    );
    expect(loop.messages.at(-1)).toEqual({
      role: 'user',
      content: [
        { type: 'tool_result', tool_use_id: 'toolu_1', content: 'contents of a' },
        {
          type: 'tool_result',
          tool_use_id: 'toolu_2',
          content: expect.stringMatching(/^not run: budget exceeded/),
          is_error: true,
        },
      ],
    });
    expect(await agentOf(loop, { budget: { maxToolCalls: 1 } }).runTurn('cheap')).toMatchObject({
      outcome: 'end_of_turn',
      text: 'next turn fine',
    });
    // The next turn's user message joined the settled results: roles alternate.
    expect(loop.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user', 'assistant']);
    expect(s.rejected).toEqual([]);
  });

  it('.settleToolCalls() answers every tool_use, and the next user message joins that answer so roles alternate', async () => {
    const s = await serve([
      {
        toolUses: [
          { id: 'toolu_1', name: 'read_file', input: { path: 'a' } },
          { id: 'toolu_2', name: 'read_file', input: { path: 'b' } },
        ],
      },
      { text: 'fine' },
    ]);
    const loop = fromAnthropic(client(s), base());
    const ctx = { signal: new AbortController().signal, turn: 1, attempt: 1 };
    await loop.sendUserMessage('start', ctx);
    await loop.settleToolCalls!(
      [
        { callId: 'toolu_1', output: 'contents of a' },
        { callId: 'toolu_2', output: 'not run: budget exceeded', isError: true },
      ],
      { outcome: 'budget_exceeded', reason: 'budget exceeded', turn: 1 },
      ctx,
    );
    expect(await loop.sendUserMessage('again', { ...ctx, turn: 2 })).toMatchObject({ text: 'fine' });
    expect(loop.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user', 'assistant']);
    expect(loop.messages[2]).toEqual({
      role: 'user',
      content: [
        { type: 'tool_result', tool_use_id: 'toolu_1', content: 'contents of a' },
        { type: 'tool_result', tool_use_id: 'toolu_2', content: 'not run: budget exceeded', is_error: true },
        { type: 'text', text: 'again' },
      ],
    });
    expect(s.rejected).toEqual([]);
  });

  it('keeps neither an empty answer nor empty text blocks, so the conversation sent back stays valid', async () => {
    const s = await serve([
      { text: '' },
      { text: '', toolUses: [{ id: 'toolu_1', name: 'read_file', input: { path: 'a' } }] },
      { text: 'done' },
    ]);
    const loop = fromAnthropic(client(s), base());
    expect(await agentOf(loop).runTurn('say nothing')).toMatchObject({ outcome: 'end_of_turn', text: '' });
    expect(await agentOf(loop).runTurn('read a')).toMatchObject({ outcome: 'end_of_turn', text: 'done' });
    expect(loop.messages[0]).toEqual({
      role: 'user',
      content: [
        { type: 'text', text: 'say nothing' },
        { type: 'text', text: 'read a' },
      ],
    });
    expect(loop.messages[1]).toEqual({
      role: 'assistant',
      content: [{ type: 'tool_use', id: 'toolu_1', name: 'read_file', input: { path: 'a' } }],
    });
    expect(s.rejected).toEqual([]);
  });

  it('continues a given conversation without modifying it', async () => {
    const s = await serve([{ text: 'continued' }]);
    const earlier = [
      { role: 'user' as const, content: 'first' },
      { role: 'assistant' as const, content: 'first answer' },
    ];
    const loop = fromAnthropic(client(s), base({ messages: earlier }));
    expect(await agentOf(loop).runTurn('second')).toMatchObject({ outcome: 'end_of_turn', text: 'continued' });
    expect(earlier).toHaveLength(2);
    expect(s.exchanges[0]!.body.messages).toEqual([...earlier, { role: 'user', content: 'second' }]);
  });

  it('cancelled during the LLM call: the request is aborted and nothing is committed', async () => {
    const s = await serve([{ text: 'too late', delayMs: 10_000 }]);
    const loop = fromAnthropic(client(s), base());
    const agent = agentOf(loop, { cancelGraceMs: 50 });
    const turn = agent.runTurn('slow');
    while (s.exchanges.length === 0) await new Promise((r) => setTimeout(r, 5));
    agent.cancel('stop');
    expect((await turn).outcome).toBe('cancelled');
    expect(loop.messages).toEqual([]);
  });

  it('streams with usage and tells onText the turn and attempt', async () => {
    const s = await serve([
      {
        toolUses: [{ id: 'toolu_1', name: 'read_file', input: { path: 'streamed.txt' } }],
        usage: { input_tokens: 10, output_tokens: 4, cache_read_input_tokens: 6 },
      },
      { text: 'The file says: contents of streamed.txt', usage: { input_tokens: 30, output_tokens: 9 } },
    ]);
    const deltas: [string, number, number][] = [];
    const loop = fromAnthropic(
      client(s),
      base({ stream: { onText: (d, { turn, attempt }) => deltas.push([d, turn, attempt]) } }),
    );
    const result = await agentOf(loop).runTurn('stream it');
    expect(result).toMatchObject({ outcome: 'end_of_turn', text: 'The file says: contents of streamed.txt' });
    expect(result.usage).toMatchObject({ inputTokens: 46, outputTokens: 13 });
    expect(deltas.map((d) => d[0]).join('')).toBe('The file says: contents of streamed.txt');
    expect(deltas.every(([, turn, attempt]) => turn === 1 && attempt === 1)).toBe(true);
    expect(s.exchanges.every((e) => e.stream)).toBe(true);
    expect(s.rejected).toEqual([]);
  });

  it('retries a stream dropped mid-way and one overloaded mid-stream; onText sees each new attempt', async () => {
    const s = await serve([
      { text: 'Hello there, partial answer', dropAfterEvents: 5 },
      { text: 'Hello again, also cut', errorAfterEvents: 5 },
      { text: 'Whole answer' },
    ]);
    const deltas: [string, number][] = [];
    const loop = fromAnthropic(client(s), base({ stream: { onText: (d, { attempt }) => deltas.push([d, attempt]) } }));
    const result = await agentOf(loop, { retry: { retries: 2, baseDelayMs: 10 } }).runTurn('hi');
    expect(result).toMatchObject({ outcome: 'end_of_turn', text: 'Whole answer' });
    expect(new Set(deltas.map(([, a]) => a))).toEqual(new Set([1, 2, 3]));
    expect(
      deltas
        .filter(([, a]) => a === 3)
        .map(([d]) => d)
        .join(''),
    ).toBe('Whole answer');
    expect(loop.messages).toEqual([
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: [{ type: 'text', text: 'Whole answer' }] },
    ]);
  });

  it('throws InvalidArgumentError naming a bad option', () => {
    const c = new Anthropic({ apiKey: 'x', baseURL: 'http://127.0.0.1:9' });
    expect(() => fromAnthropic(c, { model: 5 as never })).toThrow(InvalidArgumentError);
    expect(() => fromAnthropic(c, { model: 'm', maxTokens: 0 })).toThrow(
      'Expected `options.maxTokens` to be a positive integer',
    );
    expect(() => fromAnthropic(c, { model: 'm', tools: { 'bad name': readFile } })).toThrow(
      'options.tools["bad name"]',
    );
    expect(() => fromAnthropic(null as never, { model: 'm' })).toThrow('Expected `client` to be an Anthropic client');
  });
});

describe('checkMessagesRequest (the local server)', () => {
  const use = { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'f', input: {} }] };
  const answer = { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'r' }] };
  const req = (messages: unknown[]) => ({ model: 'm', max_tokens: 10, messages });

  it('rejects what the API rejects', () => {
    expect(checkMessagesRequest(req([{ role: 'user', content: 'x' }, use, { role: 'user', content: 'y' }]))).toMatch(
      /`tool_use` ids were found without `tool_result` blocks immediately after: toolu_1/,
    );
    expect(checkMessagesRequest(req([{ role: 'user', content: 'x' }, use]))).toMatch(/toolu_1/);
    expect(
      checkMessagesRequest(
        req([{ role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_9', content: 'r' }] }]),
      ),
    ).toMatch(/unexpected `tool_use_id` found in `tool_result` blocks: toolu_9/);
    expect(checkMessagesRequest(req([{ role: 'system', content: 'x' }]))).toMatch(/Unexpected role "system"/);
    expect(checkMessagesRequest({ model: 'm', messages: [{ role: 'user', content: 'x' }] })).toBe(
      'max_tokens: Field required',
    );
    expect(
      checkMessagesRequest(
        req([
          { role: 'user', content: 'x' },
          { role: 'assistant', content: [] },
          { role: 'user', content: 'y' },
        ]),
      ),
    ).toMatch(/non-empty content/);
    expect(
      checkMessagesRequest(req([{ role: 'user', content: 'x' }, use, answer, { role: 'user', content: 'next turn' }])),
    ).toBeUndefined();
  });
});
