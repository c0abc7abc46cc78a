import OpenAI from 'openai';
import { AgentWithStateMachine, InvalidArgumentError } from 'agent-state-machine';
import {
  fromOpenAIResponses,
  OpenAIResponseError,
  type OpenAIResponsesOptions,
} from '../../../lib/integrations/openai';
import {
  checkResponsesRequest,
  startOpenAIResponsesServer,
  type OpenAIResponsesServer,
  type ResponsesAction,
  type ResponsesMemory,
} from '../../../examples/servers/openaiResponsesServer';
import { agentOf, readFile, recordingSleep } from '../../helpers/sdkLoopTest';

// The real `openai` client against a local server that speaks the Responses API and rejects
// what the API rejects. Every scenario ends by asserting the server rejected nothing.

let server: OpenAIResponsesServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function serve(
  script: ResponsesAction[] | ((body: unknown, i: number) => ResponsesAction | Promise<ResponsesAction>),
): Promise<OpenAIResponsesServer> {
  server = await startOpenAIResponsesServer({
    respond:
      typeof script === 'function'
        ? script
        : (_body, i) => script[i] ?? { error: { status: 500, message: `script has no reply ${i}` } },
  });
  return server;
}

function client(s: OpenAIResponsesServer): OpenAI {
  return new OpenAI({ apiKey: 'sk-local', baseURL: s.baseURL });
}

const base = (extra: Partial<OpenAIResponsesOptions> = {}): OpenAIResponsesOptions => ({
  model: 'gpt-4.1-mini',
  tools: { read_file: readFile },
  system: 'You are terse.',
  ...extra,
});
const ctx = (turn = 1, attempt = 1) => ({ signal: new AbortController().signal, turn, attempt });
const types = (items: readonly unknown[]): (string | undefined)[] => items.map((i) => (i as { type?: string }).type);

describe('fromOpenAIResponses', () => {
  it('runs a full tool-use turn and keeps the conversation as Responses input items', async () => {
    const s = await serve([
      {
        toolCalls: [{ callId: 'call_1', name: 'read_file', arguments: '{"path":"a.txt"}' }],
        usage: { input_tokens: 100, output_tokens: 20 },
      },
      { text: 'a.txt says hello', usage: { input_tokens: 140, output_tokens: 5 } },
    ]);
    const loop = fromOpenAIResponses(client(s), base());
    const result = await agentOf(loop).runTurn('What is in a.txt?');

    expect(result).toMatchObject({ outcome: 'end_of_turn', text: 'a.txt says hello' });
    expect(result.usage).toMatchObject({ inputTokens: 240, outputTokens: 25, llmCalls: 2, toolCalls: 1 });
    expect(loop.items).toEqual([
      { type: 'message', role: 'user', content: 'What is in a.txt?' },
      { type: 'function_call', call_id: 'call_1', name: 'read_file', arguments: '{"path":"a.txt"}' },
      { type: 'function_call_output', call_id: 'call_1', output: 'contents of a.txt' },
      {
        id: expect.stringMatching(/^msg_/),
        type: 'message',
        role: 'assistant',
        status: 'completed',
        content: [{ type: 'output_text', text: 'a.txt says hello', annotations: [], logprobs: [] }],
      },
    ]);
    expect(JSON.parse(JSON.stringify(loop.items))).toEqual(loop.items);
    const first = s.exchanges[0]!.body;
    expect(first).toMatchObject({
      model: 'gpt-4.1-mini',
      instructions: 'You are terse.',
      input: [{ type: 'message', role: 'user', content: 'What is in a.txt?' }],
    });
    // strict: false is said out loud: left out, the API would make every property required.
    expect(first.tools).toEqual([
      {
        type: 'function',
        name: 'read_file',
        description: 'Reads a file',
        parameters: readFile.parameters,
        strict: false,
      },
    ]);
    // Nothing the API's defaults decide is sent unasked: no store, no include.
    expect(first).not.toHaveProperty('store');
    expect(first).not.toHaveProperty('include');
    expect(s.exchanges[1]!.body.input.slice(-2)).toEqual(loop.items.slice(1, 3));
    expect(s.rejected).toEqual([]);
  });

  it('reads its tools record at every request: a tool added or removed in place reaches the next request', async () => {
    const s = await serve([{ text: 'one' }, { text: 'two' }]);
    const tools: OpenAIResponsesOptions['tools'] = { read_file: readFile };
    const agent = agentOf(fromOpenAIResponses(client(s), base({ tools })));
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

  it('.sendUserMessage() aborted mid-stream rejects with the abort reason, not as a dropped stream', async () => {
    const s = await serve([{ text: 'Hello there, this never finishes', stallAfterEvents: 6 }]);
    const controller = new AbortController();
    const loop = fromOpenAIResponses(
      client(s),
      base({ stream: { onText: () => controller.abort(new Error('stop now')) } }),
    );
    await expect(loop.sendUserMessage('hi', { signal: controller.signal, turn: 1, attempt: 1 })).rejects.toThrow(
      'stop now',
    );
    expect(loop.items).toEqual([]);
  });

  it('.sendUserMessage() maps usage fully (cached, cache-write, reasoning tokens, gateway cost), the model and the status', async () => {
    const s = await serve([
      {
        text: 'hi',
        usage: {
          input_tokens: 1000,
          output_tokens: 300,
          input_tokens_details: { cached_tokens: 600, cache_write_tokens: 100 },
          output_tokens_details: { reasoning_tokens: 200 },
          cost: 0.0042,
        },
        model: 'gpt-4.1-mini-2025-04-14',
      },
      { text: 'cut sh', incomplete: 'max_output_tokens' },
    ]);
    const loop = fromOpenAIResponses(client(s), base({ maxTokens: 300, request: { temperature: 0 } }));
    expect(await loop.sendUserMessage('hello', ctx())).toEqual({
      text: 'hi',
      usage: {
        inputTokens: 1000,
        outputTokens: 300,
        cachedInputTokens: 600,
        cacheWriteTokens: 100,
        reasoningTokens: 200,
        costUsd: 0.0042,
      },
      model: 'gpt-4.1-mini-2025-04-14',
      finishReason: 'stop',
    });
    expect(s.exchanges[0]!.body).toMatchObject({ max_output_tokens: 300, temperature: 0 });
    // `incomplete` (max_output_tokens) is an answer cut short, not an error.
    expect(await loop.sendUserMessage('more', ctx(2))).toMatchObject({ text: 'cut sh', finishReason: 'length' });
    expect(s.rejected).toEqual([]);
  });

  it('runs parallel tool calls and answers each in call order', async () => {
    const s = await serve([
      {
        toolCalls: [
          { callId: 'call_a', name: 'read_file', arguments: '{"path":"a"}' },
          { callId: 'call_b', name: 'read_file', arguments: '{"path":"b"}' },
        ],
      },
      { text: 'done' },
    ]);
    const loop = fromOpenAIResponses(client(s), base());
    const result = await agentOf(loop, { toolConcurrency: 2 }).runTurn('read two');
    expect(result.outcome).toBe('end_of_turn');
    expect(s.exchanges[1]!.body.input.slice(-4)).toEqual([
      { type: 'function_call', call_id: 'call_a', name: 'read_file', arguments: '{"path":"a"}' },
      { type: 'function_call', call_id: 'call_b', name: 'read_file', arguments: '{"path":"b"}' },
      { type: 'function_call_output', call_id: 'call_a', output: 'contents of a' },
      { type: 'function_call_output', call_id: 'call_b', output: 'contents of b' },
    ]);
    expect(s.rejected).toEqual([]);
  });

  it('.runTool() sends bad JSON and unknown tools back to the LLM as outputs; the turn goes on', async () => {
    const s = await serve([
      {
        toolCalls: [
          { callId: 'call_bad', name: 'read_file', arguments: '{"path": "a.txt"' },
          { callId: 'call_unknown', name: 'delete_everything', arguments: '{}' },
        ],
      },
      { text: 'sorry' },
    ]);
    const loop = fromOpenAIResponses(client(s), base());
    expect(await agentOf(loop).runTurn('go')).toMatchObject({ outcome: 'end_of_turn', text: 'sorry' });
    const outputs = s.exchanges[1]!.body.input.filter((i: { type: string }) => i.type === 'function_call_output');
    expect(outputs[0].output).toMatch(/^error: the arguments of read_file are not valid JSON/);
    expect(outputs[1].output).toBe('error: there is no tool named "delete_everything"; the tools are: read_file');
    expect(s.rejected).toEqual([]);
  });

  it(".runTool() answers arguments that break the input schema with the validator's message and never runs the tool", async () => {
    const s = await serve([
      { toolCalls: [{ callId: 'call_1', name: 'read_file', arguments: '{"path": 3}' }] },
      { text: 'done' },
    ]);
    const ran: unknown[] = [];
    const loop = fromOpenAIResponses(
      client(s),
      base({ tools: { read_file: { ...readFile, run: async (input: { path: string }) => (ran.push(input), 'x') } } }),
    );
    expect(await agentOf(loop).runTurn('go')).toMatchObject({ outcome: 'end_of_turn', text: 'done' });
    expect(ran).toEqual([]);
    const outputs = s.exchanges[1]!.body.input.filter((i: { type: string }) => i.type === 'function_call_output');
    expect(outputs.map((o: { output: string }) => o.output)).toEqual([
      'error: the arguments of read_file do not match its input schema: input.path must be string; send them again, corrected',
    ]);
    expect(s.rejected).toEqual([]);
  });

  it('gives empty and repeated call ids unique ones, so every call is answered and the next requests are valid', async () => {
    const s = await serve([
      {
        toolCalls: [
          { callId: '', name: 'read_file', arguments: '{"path":"a"}' },
          { callId: 'call_x', name: 'read_file', arguments: '{"path":"b"}' },
          { callId: 'call_x', name: 'read_file', arguments: '{"path":"c"}' },
        ],
      },
      { text: 'read three' },
      { text: 'second turn' },
    ]);
    const loop = fromOpenAIResponses(client(s), base());
    const agent = agentOf(loop);
    expect(await agent.runTurn('read a, b and c')).toMatchObject({ outcome: 'end_of_turn', text: 'read three' });
    expect(await agent.runTurn('again')).toMatchObject({ outcome: 'end_of_turn', text: 'second turn' });
    const pairs = loop.items.flatMap((i) =>
      i.type === 'function_call'
        ? [['call', i.call_id]]
        : i.type === 'function_call_output'
          ? [['output', i.call_id, i.output]]
          : [],
    );
    expect(pairs).toEqual([
      ['call', 'call_asm1'],
      ['call', 'call_x'],
      ['call', 'call_asm2'],
      ['output', 'call_asm1', 'contents of a'],
      ['output', 'call_x', 'contents of b'],
      ['output', 'call_asm2', 'contents of c'],
    ]);
    expect(s.rejected).toEqual([]);
  });

  it('commits items only after a call succeeded, and turns the SDK retries off (500, then success)', async () => {
    const s = await serve([
      { error: { status: 500, message: 'The server had an error while processing your request.' } },
      { text: 'ok' },
    ]);
    const loop = fromOpenAIResponses(client(s), base());
    const result = await agentOf(loop, { retry: { retries: 2, baseDelayMs: 10 } }).runTurn('hello');
    expect(result).toMatchObject({ outcome: 'end_of_turn', text: 'ok' });
    // Exactly two requests: the SDK did not retry on its own; the adapter did, once.
    expect(s.exchanges).toHaveLength(2);
    expect(s.exchanges[0]!.body.input).toEqual(s.exchanges[1]!.body.input);
    expect(loop.items.filter((i) => 'role' in i && i.role === 'user')).toHaveLength(1);
    expect(s.rejected).toEqual([]);
  });

  it('keeps the status and headers of errors, so Retry-After is honoured (429)', async () => {
    const s = await serve([
      {
        error: {
          status: 429,
          message: 'Rate limit reached for gpt-4.1-mini',
          type: 'requests',
          code: 'rate_limit_exceeded',
          headers: { 'retry-after': '3', 'x-request-id': 'req_429' },
        },
      },
      { text: 'ok' },
    ]);
    const sleep = recordingSleep();
    const attempts: unknown[] = [];
    const agent = new AgentWithStateMachine(fromOpenAIResponses(client(s), base()), {
      logger: false,
      sleep,
      retry: { retries: 2, baseDelayMs: 10 },
    });
    agent.on('llmAttempt', (e) => attempts.push(e.error));
    const result = await agent.runTurn('hello');
    expect(result.outcome).toBe('end_of_turn');
    expect(s.exchanges).toHaveLength(2);
    expect(sleep.delays).toHaveLength(1);
    expect(sleep.delays[0]).toBeGreaterThanOrEqual(3000);
    const error = attempts[0] as { status?: number; headers?: Headers; code?: string };
    expect(error.status).toBe(429);
    expect(error.code).toBe('rate_limit_exceeded');
    expect(error.headers?.get('retry-after')).toBe('3');
    expect(error.headers?.get('x-request-id')).toBe('req_429');
    expect(s.rejected).toEqual([]);
  });

  it('does not retry a 400 the API will give again; nothing is committed', async () => {
    const s = await serve([
      {
        error: {
          status: 400,
          message: 'Your input exceeds the context window of this model.',
          type: 'invalid_request_error',
          code: 'context_length_exceeded',
        },
      },
      { text: 'never' },
    ]);
    const loop = fromOpenAIResponses(client(s), base());
    const result = await agentOf(loop).runTurn('hello');
    expect(result.outcome).toBe('error');
    expect(result.error?.message).toMatch(/context window/);
    expect((result.error?.cause as { status?: number }).status).toBe(400);
    expect(s.exchanges).toHaveLength(1);
    expect(loop.items).toEqual([]);
    expect(s.rejected).toEqual([]);
  });

  it('cancelled mid-tool: every function_call gets its output, the next turn is accepted', async () => {
    let started!: () => void;
    const toolStarted = new Promise<void>((r) => (started = r));
    const signals: AbortSignal[] = [];
    const slow = {
      parameters: { type: 'object', properties: {} },
      run: (_input: unknown, c: { signal: AbortSignal }) =>
        new Promise<string>((_resolve, reject) => {
          signals.push(c.signal);
          started();
          c.signal.addEventListener('abort', () => reject(new Error('aborted')), { once: true });
        }),
    };
    const s = await serve([
      {
        toolCalls: [
          { callId: 'call_fast', name: 'read_file', arguments: '{"path":"a"}' },
          { callId: 'call_slow', name: 'slow', arguments: '{}' },
          { callId: 'call_never', name: 'read_file', arguments: '{"path":"b"}' },
        ],
      },
      { text: 'second turn fine' },
    ]);
    const loop = fromOpenAIResponses(client(s), base({ tools: { read_file: readFile, slow } }));
    const agent = agentOf(loop, { cancelGraceMs: 50 });
    const turn = agent.runTurn('start');
    await toolStarted;
    agent.cancel('user pressed Esc');
    const first = await turn;
    expect(first.outcome).toBe('cancelled');
    expect(signals[0]!.aborted).toBe(true);
    const outputs = loop.items.filter((i) => i.type === 'function_call_output') as {
      call_id: string;
      output: string;
    }[];
    expect(outputs.map((o) => o.call_id)).toEqual(['call_fast', 'call_slow', 'call_never']);
    expect(outputs[0]!.output).toBe('contents of a');
    expect(outputs[1]!.output).toMatch(/interrupted/);
    expect(outputs[2]!.output).toMatch(/^(interrupted|not run): user pressed Esc/);

    const second = await agent.runTurn('again');
    expect(second).toMatchObject({ outcome: 'end_of_turn', text: 'second turn fine' });
    expect(s.exchanges).toHaveLength(2);
    expect(s.rejected).toEqual([]);
  });

  it('stopped by a budget mid-turn: the calls are settled and a turn under a fresh budget is accepted', async () => {
    const s = await serve([
      {
        toolCalls: [
          { callId: 'call_1', name: 'read_file', arguments: '{"path":"a"}' },
          { callId: 'call_2', name: 'read_file', arguments: '{"path":"b"}' },
        ],
      },
      { text: 'next turn fine' },
    ]);
    const loop = fromOpenAIResponses(client(s), base());
    const first = await agentOf(loop, { budget: { maxToolCalls: 1 } }).runTurn('two files, budget for one');
    expect(first.outcome).toBe('budget_exceeded');
    expect(loop.items.slice(-2)).toEqual([
      { type: 'function_call_output', call_id: 'call_1', output: 'contents of a' },
      {
        type: 'function_call_output',
        call_id: 'call_2',
        output: expect.stringMatching(/^not run: budget exceeded: 1 tool call of 1 tool call/),
      },
    ]);
    // The loop outlives the adapter: continue the same conversation under a new budget.
    const second = await agentOf(loop, { budget: { maxToolCalls: 1 } }).runTurn('cheap');
    expect(second).toMatchObject({ outcome: 'end_of_turn', text: 'next turn fine' });
    expect(s.rejected).toEqual([]);
  });

  it('continues a given conversation without modifying it', async () => {
    const s = await serve([{ text: 'continued' }]);
    const earlier = [
      { type: 'message' as const, role: 'user' as const, content: 'first' },
      { type: 'message' as const, role: 'assistant' as const, content: 'first answer' },
    ];
    const loop = fromOpenAIResponses(client(s), base({ system: undefined, items: earlier }));
    expect(await agentOf(loop).runTurn('second')).toMatchObject({ outcome: 'end_of_turn', text: 'continued' });
    expect(earlier).toHaveLength(2);
    expect(s.exchanges[0]!.body.input).toEqual([...earlier, { type: 'message', role: 'user', content: 'second' }]);
    expect(s.exchanges[0]!.body).not.toHaveProperty('instructions');
  });

  it('cancelled during the LLM call: the request is aborted and nothing is committed', async () => {
    const s = await serve([{ text: 'too late', delayMs: 10_000 }]);
    const loop = fromOpenAIResponses(client(s), base({ stream: true }));
    const agent = agentOf(loop, { cancelGraceMs: 50 });
    const turn = agent.runTurn('slow');
    while (s.exchanges.length === 0) await new Promise((r) => setTimeout(r, 5));
    agent.cancel('stop');
    expect((await turn).outcome).toBe('cancelled');
    expect(loop.items).toEqual([]);
    expect(s.rejected).toEqual([]);
  });

  it('cancelled mid-stream: the stream is aborted, the attempt is not retried, nothing is committed, the next turn works', async () => {
    const s = await serve([
      { text: 'Hello there, this never finishes', stallAfterEvents: 6 },
      { text: 'next turn fine' },
    ]);
    let agent!: AgentWithStateMachine;
    const loop = fromOpenAIResponses(
      client(s),
      base({ stream: { onText: (_d, { turn }) => turn === 1 && agent.cancel('user pressed Esc') } }),
    );
    agent = agentOf(loop, { cancelGraceMs: 50, retry: { retries: 2, baseDelayMs: 10 } });
    const attempts: unknown[] = [];
    agent.on('llmAttempt', (e) => attempts.push(e.error));
    expect((await agent.runTurn('slow')).outcome).toBe('cancelled');
    // An abort, not a dropped connection (the SDK ends an aborted stream quietly).
    expect(attempts).toHaveLength(1);
    expect(String(attempts[0])).not.toMatch(/dropped/);
    expect(s.exchanges).toHaveLength(1);
    expect(loop.items).toEqual([]);
    expect(await agent.runTurn('again')).toMatchObject({ outcome: 'end_of_turn', text: 'next turn fine' });
    expect(s.rejected).toEqual([]);
  });

  it('streams through the SDK event stream and tells onText the turn and attempt', async () => {
    const s = await serve([
      {
        toolCalls: [{ callId: 'call_1', name: 'read_file', arguments: '{"path":"streamed.txt"}' }],
        usage: { input_tokens: 10, output_tokens: 4 },
      },
      {
        text: 'The file says: contents of streamed.txt',
        usage: { input_tokens: 30, output_tokens: 9, input_tokens_details: { cached_tokens: 10 } },
        model: 'gpt-4.1-mini-2025-04-14',
      },
    ]);
    const deltas: [string, number, number][] = [];
    const loop = fromOpenAIResponses(
      client(s),
      base({ stream: { onText: (d, { turn, attempt }) => deltas.push([d, turn, attempt]) } }),
    );
    const result = await agentOf(loop).runTurn('stream it');
    expect(result).toMatchObject({ outcome: 'end_of_turn', text: 'The file says: contents of streamed.txt' });
    expect(result.usage).toMatchObject({ inputTokens: 40, outputTokens: 13, llmCalls: 2, toolCalls: 1 });
    expect(s.exchanges.every((e) => e.stream)).toBe(true);
    expect(deltas.map((d) => d[0]).join('')).toBe('The file says: contents of streamed.txt');
    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.every(([, turn, attempt]) => turn === 1 && attempt === 1)).toBe(true);
    expect(types(loop.items)).toEqual(['message', 'function_call', 'function_call_output', 'message']);
    expect(s.rejected).toEqual([]);
  });

  it('retries a stream dropped mid-way; onText sees the new attempt and the conversation gets one answer', async () => {
    const s = await serve([
      { text: 'Hello there, partial answer', dropAfterEvents: 6 },
      { text: 'Hello again, whole answer' },
    ]);
    const deltas: [string, number][] = [];
    const loop = fromOpenAIResponses(
      client(s),
      base({ stream: { onText: (d, { attempt }) => deltas.push([d, attempt]) } }),
    );
    const result = await agentOf(loop, { retry: { retries: 2, baseDelayMs: 10 } }).runTurn('hi');
    expect(result).toMatchObject({ outcome: 'end_of_turn', text: 'Hello again, whole answer' });
    // What attempt 1 showed before the cut depends on timing; attempt 2 is whole, and says so.
    expect(
      deltas
        .filter(([, a]) => a === 2)
        .map(([d]) => d)
        .join(''),
    ).toBe('Hello again, whole answer');
    expect(loop.items.filter((i) => i.type === 'message' && i.role === 'assistant')).toHaveLength(1);
    expect(s.exchanges).toHaveLength(2);
    expect(s.rejected).toEqual([]);
  });

  it('a stream that ends cleanly before response.completed is an error and retried, never a short answer', async () => {
    const s = await serve([{ text: 'Hello there, partial answer', endAfterEvents: 6 }, { text: 'whole answer' }]);
    const attempts: unknown[] = [];
    const loop = fromOpenAIResponses(client(s), base({ stream: true }));
    const agent = agentOf(loop, { retry: { retries: 2, baseDelayMs: 10 } });
    agent.on('llmAttempt', (e) => attempts.push(e.error));
    expect(await agent.runTurn('hi')).toMatchObject({ outcome: 'end_of_turn', text: 'whole answer' });
    expect(String((attempts[0] as Error).message)).toMatch(/ended before response\.completed \(response resp_/);
    expect(s.exchanges).toHaveLength(2);
    expect(s.rejected).toEqual([]);
  });

  it.each([
    ['an error event as the API sends it (fields under `error`)', 'error' as const],
    ['an error event as the API reference shows it', 'error-documented' as const],
    ['response.failed', 'response.failed' as const],
  ])(
    'a stream failing with %s is retried when its code says so (rate limit), with the code kept',
    async (_name, as) => {
      const s = await serve([
        { text: 'partial', fail: { code: 'rate_limit_exceeded', message: 'Rate limit reached', as, afterEvents: 5 } },
        { text: 'second try' },
      ]);
      const attempts: unknown[] = [];
      const loop = fromOpenAIResponses(client(s), base({ stream: true }));
      const agent = agentOf(loop, { retry: { retries: 2, baseDelayMs: 10 } });
      agent.on('llmAttempt', (e) => attempts.push(e.error));
      expect(await agent.runTurn('hi')).toMatchObject({ outcome: 'end_of_turn', text: 'second try' });
      const error = attempts[0] as OpenAIResponseError;
      expect(error).toBeInstanceOf(OpenAIResponseError);
      expect(error).toMatchObject({ code: 'rate_limit_exceeded', status: 429 });
      expect(error.message).toMatch(/Rate limit reached/);
      expect(loop.items.filter((i) => i.type === 'message' && i.role === 'assistant')).toHaveLength(1);
      expect(s.rejected).toEqual([]);
    },
  );

  it('a response that failed on its prompt (status failed, invalid_prompt) is not retried', async () => {
    const s = await serve([
      { fail: { code: 'invalid_prompt', message: 'Invalid prompt: flagged.' } },
      { text: 'never' },
    ]);
    const loop = fromOpenAIResponses(client(s), base());
    const result = await agentOf(loop).runTurn('hi');
    expect(result.outcome).toBe('error');
    expect(result.error?.cause).toBeInstanceOf(OpenAIResponseError);
    expect(result.error?.cause).toMatchObject({
      code: 'invalid_prompt',
      status: 400,
      responseId: expect.stringMatching(/^resp_/),
    });
    expect(s.exchanges).toHaveLength(1);
    expect(loop.items).toEqual([]);
    expect(s.rejected).toEqual([]);
  });

  it('carries reasoning across turns with store: false as encrypted content, which the server verifies', async () => {
    const s = await serve([
      {
        reasoning: { summary: ['Need the file first.'] },
        toolCalls: [{ callId: 'call_1', name: 'read_file', arguments: '{"path":"a"}' }],
        usage: { input_tokens: 50, output_tokens: 40, output_tokens_details: { reasoning_tokens: 32 } },
      },
      { reasoning: { summary: ['Now answer.'] }, text: 'It says a.' },
      { reasoning: {}, text: 'Still a.' },
    ]);
    const loop = fromOpenAIResponses(client(s), base({ model: 'o4-mini', store: false, stream: true }));
    const agent = agentOf(loop);
    const first = await agent.runTurn('What is in a?');
    expect(first).toMatchObject({ outcome: 'end_of_turn', text: 'It says a.' });
    expect(await agent.runTurn('And again?')).toMatchObject({ outcome: 'end_of_turn', text: 'Still a.' });

    expect(
      s.exchanges.every((e) => e.body.store === false && e.body.include?.includes('reasoning.encrypted_content')),
    ).toBe(true);
    expect(types(loop.items)).toEqual([
      'message',
      'reasoning',
      'function_call',
      'function_call_output',
      'reasoning',
      'message',
      'message',
      'reasoning',
      'message',
    ]);
    const reasoning = loop.items.filter((i) => i.type === 'reasoning') as {
      id: string;
      encrypted_content?: string;
      summary: unknown[];
    }[];
    expect(reasoning.every((r) => typeof r.encrypted_content === 'string' && r.id.startsWith('rs_'))).toBe(true);
    expect(reasoning[0]!.summary).toEqual([{ type: 'summary_text', text: 'Need the file first.' }]);
    // With nothing stored, the assistant messages go back without the ids the server never kept.
    expect(loop.items.filter((i) => i.type === 'message' && i.role === 'assistant').every((m) => !('id' in m))).toBe(
      true,
    );
    // The third request carried both earlier turns' reasoning back.
    expect(s.exchanges[2]!.body.input.filter((i: { type: string }) => i.type === 'reasoning')).toHaveLength(2);
    expect(s.rejected).toEqual([]);
  });

  it('with the default store, reasoning goes back by id (the server stored it) and no include is asked for', async () => {
    const s = await serve([{ reasoning: { summary: ['Think.'] }, text: 'one' }, { text: 'two' }]);
    const loop = fromOpenAIResponses(client(s), base({ model: 'gpt-5-mini' }));
    await loop.sendUserMessage('first', ctx());
    await loop.sendUserMessage('second', ctx(2));
    expect(s.exchanges[1]!.body).not.toHaveProperty('include');
    expect(s.exchanges[1]!.body.input[1]).toEqual({
      id: expect.stringMatching(/^rs_/),
      type: 'reasoning',
      summary: [{ type: 'summary_text', text: 'Think.' }],
    });
    expect(s.rejected).toEqual([]);
  });

  it('leaves out reasoning the API could not take back: no encrypted content under store: false, or cut off before any other item', async () => {
    const s = await serve([
      { reasoning: { summary: ['x'] }, text: 'one', withholdEncryptedContent: true },
      { reasoning: { summary: ['thinking until the tokens ran out'] }, incomplete: 'max_output_tokens' },
      { text: 'three' },
    ]);
    const loop = fromOpenAIResponses(client(s), base({ model: 'o4-mini', store: false, maxTokens: 16 }));
    expect(await loop.sendUserMessage('first', ctx())).toMatchObject({ text: 'one' });
    expect(await loop.sendUserMessage('second', ctx(2))).toEqual(
      expect.objectContaining({ text: '', finishReason: 'length' }),
    );
    expect(await loop.sendUserMessage('third', ctx(3))).toMatchObject({ text: 'three' });
    expect(types(loop.items)).toEqual(['message', 'message', 'message', 'message', 'message']);
    expect(s.rejected).toEqual([]);
  });

  it('encryptedReasoning: false keeps store: false working for a model that does not reason', async () => {
    const s = await serve([{ text: 'one' }, { text: 'two' }]);
    const loop = fromOpenAIResponses(
      client(s),
      base({ model: 'gpt-4o-mini', store: false, encryptedReasoning: false }),
    );
    await loop.sendUserMessage('first', ctx());
    await loop.sendUserMessage('second', ctx(2));
    expect(s.exchanges.map((e) => e.body.include)).toEqual([undefined, undefined]);
    expect(s.rejected).toEqual([]);
  });

  it("merges its include with the one in `request`, and sends strictTools as each tool's strict", async () => {
    const s = await serve([{ text: 'ok' }]);
    const strictRead = { ...readFile, parameters: { ...readFile.parameters, additionalProperties: false } };
    const loop = fromOpenAIResponses(
      client(s),
      base({
        model: 'o4-mini',
        store: false,
        strictTools: true,
        tools: { read_file: strictRead },
        request: { include: ['message.output_text.logprobs'] },
      }),
    );
    await loop.sendUserMessage('hi', ctx());
    expect(s.exchanges[0]!.body.include).toEqual(['message.output_text.logprobs', 'reasoning.encrypted_content']);
    expect(s.exchanges[0]!.body.tools[0].strict).toBe(true);
    expect(s.rejected).toEqual([]);
  });

  it('.settleToolCalls() answers every function_call, so the next request is valid', async () => {
    const s = await serve([
      {
        toolCalls: [
          { callId: 'call_1', name: 'read_file', arguments: '{"path":"a"}' },
          { callId: 'call_2', name: 'read_file', arguments: '{"path":"b"}' },
        ],
      },
      { text: 'fine' },
    ]);
    const loop = fromOpenAIResponses(client(s), base());
    await loop.sendUserMessage('start', ctx());
    await loop.settleToolCalls!(
      [
        { callId: 'call_1', output: 'contents of a' },
        { callId: 'call_2', output: 'interrupted: user pressed Esc', isError: true },
      ],
      { outcome: 'cancelled', reason: 'user pressed Esc', turn: 1 },
      ctx(),
    );
    expect(await loop.sendUserMessage('again', ctx(2))).toMatchObject({ text: 'fine' });
    expect(types(loop.items)).toEqual([
      'message',
      'function_call',
      'function_call',
      'function_call_output',
      'function_call_output',
      'message',
      'message',
    ]);
    expect(s.rejected).toEqual([]);
  });

  it('a conversation the API would reject is rejected by the server: the turn ends in Error with the 400', async () => {
    const s = await serve([{ text: 'never' }]);
    const unanswered = [
      { type: 'message' as const, role: 'user' as const, content: 'read a' },
      { type: 'function_call' as const, call_id: 'call_lost', name: 'read_file', arguments: '{"path":"a"}' },
    ];
    const loop = fromOpenAIResponses(client(s), base({ items: unanswered }));
    const result = await agentOf(loop).runTurn('go on');
    expect(result.outcome).toBe('error');
    expect(result.error?.message).toMatch(/No tool output found for function call call_lost\./);
    expect((result.error?.cause as { status?: number }).status).toBe(400);
    expect(s.rejected.map((e) => e.rejected)).toEqual([
      { status: 400, message: 'No tool output found for function call call_lost.' },
    ]);
  });

  it('a response without usage under maxCostUsd ends the turn in Error instead of charging $0', async () => {
    const s = await serve([{ text: 'free?', usage: null }]);
    const result = await agentOf(fromOpenAIResponses(client(s), base()), {
      budget: { maxCostUsd: 1, strict: false },
    }).runTurn('hi');
    expect(result.outcome).toBe('error');
    expect(result.error?.message).toMatch(/cost/);
    expect(s.rejected).toEqual([]);
  });

  it('throws InvalidArgumentError naming a bad option', () => {
    const c = new OpenAI({ apiKey: 'x', baseURL: 'http://127.0.0.1:9/v1' });
    expect(() => fromOpenAIResponses(c, { model: '' })).toThrow(InvalidArgumentError);
    expect(() => fromOpenAIResponses(c, { model: 'm', tools: { t: { parameters: {}, run: 5 as never } } })).toThrow(
      'Expected `options.tools.t.run` to be a function',
    );
    expect(() => fromOpenAIResponses(c, { model: 'm', maxTokens: 8 })).toThrow(
      'Expected `options.maxTokens` to be an integer of 16 or more',
    );
    expect(() => fromOpenAIResponses(c, { model: 'm', items: {} as never })).toThrow('options.items');
    expect(() => fromOpenAIResponses(c, { model: 'm', messages: [] } as never)).toThrow('use options.items');
    expect(() => fromOpenAIResponses(c, { model: 'm', store: 'no' as never })).toThrow('options.store');
    expect(() => fromOpenAIResponses(c, { model: 'm', request: { previous_response_id: 'resp_1' } })).toThrow(
      'options.request.previous_response_id',
    );
    expect(() => fromOpenAIResponses(c, { model: 'm', request: { input: 'x' } })).toThrow('use options.items');
    expect(() => fromOpenAIResponses({ chat: {} } as never, { model: 'm' })).toThrow(
      'Expected `client` to be an OpenAI client (with responses.create)',
    );
  });
});

describe('checkResponsesRequest (the local server)', () => {
  const memory = (): ResponsesMemory => ({
    stored: new Set(['rs_kept']),
    encrypted: new Set(['enc_ok']),
    reasons: (m) => m.startsWith('o'),
  });
  const call = { type: 'function_call', call_id: 'call_1', name: 'f', arguments: '{}' };
  const output = { type: 'function_call_output', call_id: 'call_1', output: 'r' };
  const user = { role: 'user', content: 'x' };
  const check = (body: Record<string, unknown>) => checkResponsesRequest({ model: 'o4-mini', ...body }, memory());

  it('accepts a valid conversation', () => {
    expect(check({ input: 'hello' })).toBeUndefined();
    expect(
      check({
        input: [
          user,
          call,
          output,
          { type: 'reasoning', id: 'rs_kept', summary: [] },
          { role: 'assistant', content: [{ type: 'output_text', text: 'y' }] },
        ],
      }),
    ).toBeUndefined();
    expect(
      check({
        store: false,
        include: ['reasoning.encrypted_content'],
        input: [user, { type: 'reasoning', id: 'rs_x', summary: [], encrypted_content: 'enc_ok' }, call, output],
      }),
    ).toBeUndefined();
  });

  it('rejects what the API rejects', () => {
    expect(check({})).toBe("Missing required parameter: 'input'.");
    expect(checkResponsesRequest({ input: 'x' })).toBe("Missing required parameter: 'model'.");
    expect(check({ input: [user, call] })).toBe('No tool output found for function call call_1.');
    expect(check({ input: [user, call, user] })).toBe('No tool output found for function call call_1.');
    expect(check({ input: [user, output] })).toBe('No tool call found for function call output with call_id call_1.');
    expect(check({ input: [{ role: 'tool', content: 'x' }] })).toBe(
      "Invalid value: 'tool'. Supported values are: 'assistant', 'system', 'developer', and 'user'.",
    );
    expect(check({ input: [user, { role: 'assistant', content: [{ type: 'input_text', text: 'y' }] }] })).toBe(
      "Invalid value: 'input_text'. Supported values are: 'output_text' and 'refusal'.",
    );
    expect(
      check({
        store: false,
        input: [user, { type: 'reasoning', id: 'rs_gone', summary: [] }, { role: 'assistant', content: 'y' }],
      }),
    ).toBe(
      "Item with id 'rs_gone' not found. Items are not persisted when `store` is set to false. Try again with `store` set to true, or remove this item from your input.",
    );
    expect(
      check({ input: [user, { type: 'reasoning', id: 'rs_gone', summary: [] }, { role: 'assistant', content: 'y' }] }),
    ).toBe("Item with id 'rs_gone' not found.");
    expect(
      check({
        input: [
          user,
          { type: 'reasoning', id: 'rs_x', summary: [], encrypted_content: 'forged' },
          { role: 'assistant', content: 'y' },
        ],
      }),
    ).toBe('The encrypted content for item rs_x could not be verified.');
    expect(check({ input: [user, { type: 'reasoning', id: 'rs_kept', summary: [] }, user] })).toBe(
      "Item 'rs_kept' of type 'reasoning' was provided without its required following item.",
    );
    expect(check({ input: [user, { ...call, id: 'call_1' }, output] })).toBe(
      "Invalid 'input[1].id': 'call_1'. Expected an ID that begins with 'fc'.",
    );
    expect(
      checkResponsesRequest({ model: 'gpt-4o-mini', input: 'x', include: ['reasoning.encrypted_content'] }, memory()),
    ).toBe('Encrypted content is not supported with this model.');
    expect(check({ input: 'x', max_output_tokens: 8 })).toBe(
      "Invalid 'max_output_tokens': integer below minimum value. Expected a value >= 16, but got 8 instead.",
    );
    expect(check({ input: 'x', tools: [{ type: 'function', function: { name: 'f', parameters: {} } }] })).toBe(
      "Missing required parameter: 'tools[0].name'.",
    );
    expect(
      check({
        input: 'x',
        tools: [
          {
            type: 'function',
            name: 'f',
            strict: true,
            parameters: { type: 'object', properties: { a: { type: 'string' } } },
          },
        ],
      }),
    ).toBe(
      "Invalid schema for function 'f': In context=(), 'additionalProperties' is required to be supplied and to be false.",
    );
  });
});
