// recordFetch / replayFetch with the real SDK clients against the strict local servers: a
// user's own loop code recorded, then replayed with the server closed.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { startAnthropicMessagesServer } from '../../examples/servers/anthropicMessagesServer';
import { startOpenAIChatServer } from '../../examples/servers/openaiChatServer';
import { AgentWithStateMachine } from '../../lib/agent/AgentWithStateMachine';
import { createScriptedAgent } from '../../lib/agent/createScriptedAgent';
import { JsonlHistorySink } from '../../lib/history/JsonlHistorySink';
import { loadHistory } from '../../lib/history/loadHistory';
import { validateHistory } from '../../lib/history/validateHistory';
import { recordFetch } from '../../lib/replay/recordFetch';
import { replayFetch } from '../../lib/replay/replayFetch';
import { runCli } from '../helpers/runCli';

const KEY = 'sk-test-secret-0123456789';

let dir: string;
beforeEach(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-sm-fetch-'))));
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

/** The user's own loop: ask, run the tool the model asks for, send its result, stream the final answer. */
async function openaiLoop(client: OpenAI, question: string): Promise<string[]> {
  const said: string[] = [];
  const messages: OpenAI.Chat.ChatCompletionMessageParam[] = [{ role: 'user', content: question }];
  const tools: OpenAI.Chat.ChatCompletionTool[] = [
    { type: 'function', function: { name: 'lookup', parameters: { type: 'object', properties: {} } } },
  ];
  const first = await client.chat.completions.create({ model: 'gpt-test', messages, tools });
  const message = first.choices[0]!.message;
  messages.push(message);
  for (const call of message.tool_calls ?? []) {
    said.push(`tool ${call.id}`);
    messages.push({ role: 'tool', tool_call_id: call.id, content: `looked up for ${question}` });
  }
  const stream = await client.chat.completions.create({
    model: 'gpt-test',
    messages,
    stream: true,
    stream_options: { include_usage: true },
  });
  let text = '';
  for await (const chunk of stream) {
    text += chunk.choices[0]?.delta.content ?? '';
    if (chunk.usage) said.push(`usage ${chunk.usage.total_tokens}`);
  }
  said.push(text);
  return said;
}

describe('recordFetch and replayFetch with the OpenAI SDK', () => {
  async function recordOpenAI(file: string): Promise<{ said: string[]; served: number }> {
    const server = await startOpenAIChatServer({
      respond: (_body, index) =>
        index === 0
          ? { toolCalls: [{ name: 'lookup', arguments: '{}' }] }
          : { content: 'The answer, streamed in pieces.' },
    });
    try {
      const fetch = recordFetch({ file });
      const client = new OpenAI({ apiKey: KEY, baseURL: server.baseURL, fetch, maxRetries: 0 });
      const said = await openaiLoop(client, 'what is up?');
      await fetch.close();
      return { said, served: server.exchanges.length };
    } finally {
      await server.close();
    }
  }

  it('replays a run with the server closed: the same results, and no request leaves the process', async () => {
    const file = path.join(dir, 'openai.jsonl');
    const recorded = await recordOpenAI(file);
    expect(recorded.served).toBe(2);
    const text = fs.readFileSync(file, 'utf8');
    // The key and the Authorization header never reach the file.
    expect(text).not.toContain(KEY);
    expect(text.toLowerCase()).not.toContain('authorization');
    const loaded = await loadHistory(file);
    expect(loaded.exchanges.map((e) => [e.call, e.request.method, e.request.path, e.response?.status])).toEqual([
      [1, 'POST', '/v1/chat/completions', 200],
      [2, 'POST', '/v1/chat/completions', 200],
    ]);
    // The streamed body is recorded whole.
    expect(loaded.exchanges[1]!.response!.body).toContain('data: [DONE]');
    expect(validateHistory(loaded.entries)).toMatchObject({ ok: true });

    const replay = await replayFetch(file);
    const client = new OpenAI({
      apiKey: 'another-key',
      baseURL: 'http://127.0.0.1:9/v1',
      fetch: replay,
      maxRetries: 0,
    });
    expect(await openaiLoop(client, 'what is up?')).toEqual(recorded.said);
    expect({ calls: replay.calls, diverged: replay.diverged }).toEqual({ calls: 2, diverged: undefined });
  });

  it('stops at the first request that differs, naming the call and the JSON path', async () => {
    const file = path.join(dir, 'openai.jsonl');
    await recordOpenAI(file);
    const again = await replayFetch(file);
    let sent = 0;
    const counted: typeof fetch = (input, init) => (sent++, again(input as string, init));
    const other = new OpenAI({ apiKey: KEY, baseURL: 'http://127.0.0.1:9/v1', fetch: counted, maxRetries: 2 });
    await expect(openaiLoop(other, 'what is down?')).rejects.toThrow(
      'diverged at LLM call 1: body.messages[0].content differs: recorded "what is up?", sent "what is down?"',
    );
    // Not retried: the SDK sent it once, and the replay stays stopped.
    expect({ sent, answered: again.calls }).toEqual({ sent: 1, answered: 0 });
    expect(again.diverged?.llmCall).toBe(1);
  });

  it('names a divergence deep in a later call', async () => {
    const file = path.join(dir, 'openai.jsonl');
    await recordOpenAI(file);
    const replay = await replayFetch(file);
    const client = new OpenAI({ apiKey: KEY, baseURL: 'http://127.0.0.1:9/v1', fetch: replay, maxRetries: 0 });
    const first = await client.chat.completions.create({
      model: 'gpt-test',
      messages: [{ role: 'user', content: 'what is up?' }],
      tools: [{ type: 'function', function: { name: 'lookup', parameters: { type: 'object', properties: {} } } }],
    });
    const call = first.choices[0]!.message.tool_calls![0]!;
    await expect(
      client.chat.completions.create({
        model: 'gpt-test',
        messages: [
          { role: 'user', content: 'what is up?' },
          first.choices[0]!.message,
          { role: 'tool', tool_call_id: call.id, content: 'a different result' },
        ],
        stream: true,
        stream_options: { include_usage: true },
      }),
    ).rejects.toThrow(
      'diverged at LLM call 2: body.messages[2].content differs: recorded "looked up for what is up?", sent "a different result"',
    );
    expect(replay.diverged?.llmCall).toBe(2);
  });

  it('names a request past the end of the recording, and a changed path', async () => {
    const file = path.join(dir, 'openai.jsonl');
    await recordOpenAI(file);
    const exchanges = (await loadHistory(file)).exchanges;
    const post = (e: (typeof exchanges)[number]): RequestInit => ({
      method: 'POST',
      body: JSON.stringify(e.request.body),
    });
    const past = await replayFetch(exchanges);
    for (const e of exchanges) expect((await past('http://h/v1/chat/completions', post(e))).status).toBe(200);
    const extra = await past('http://h/v1/chat/completions', post(exchanges[0]!));
    expect(extra.status).toBe(400);
    expect(extra.headers.get('x-should-retry')).toBe('false');
    expect(past.diverged?.message).toBe(
      'diverged at LLM call 3: POST /v1/chat/completions was sent, the recording holds 2 calls',
    );
    const moved = await replayFetch(exchanges);
    await moved('http://h/v1/responses', post(exchanges[0]!));
    expect(moved.diverged?.message).toBe(
      'diverged at LLM call 1: the request was POST /v1/responses, the recording has POST /v1/chat/completions',
    );
  });
});

describe("recordFetch and replayFetch with the Anthropic SDK, in a run's history file", () => {
  async function anthropicLoop(client: Anthropic, question: string): Promise<string[]> {
    const said: string[] = [];
    const messages: Anthropic.MessageParam[] = [{ role: 'user', content: question }];
    const first = await client.messages.create({
      model: 'claude-test',
      max_tokens: 100,
      messages,
      tools: [{ name: 'lookup', input_schema: { type: 'object', properties: {} } }],
    });
    messages.push({ role: 'assistant', content: first.content });
    const results: Anthropic.ToolResultBlockParam[] = [];
    for (const block of first.content)
      if (block.type === 'tool_use') {
        said.push(`tool ${block.id}`);
        results.push({ type: 'tool_result', tool_use_id: block.id, content: 'found' });
      }
    messages.push({ role: 'user', content: results });
    const final = await client.messages.stream({ model: 'claude-test', max_tokens: 100, messages }).finalMessage();
    said.push(final.content.map((b) => (b.type === 'text' ? b.text : '')).join(''));
    said.push(`usage ${final.usage.input_tokens}+${final.usage.output_tokens}`);
    return said;
  }

  it('records into the sink beside the moves; validate and load accept it; replays offline', async () => {
    const server = await startAnthropicMessagesServer({
      respond: (_body, index) =>
        index === 0 ? { toolUses: [{ name: 'lookup', input: {} }] } : { text: 'Found it, streamed.' },
    });
    const file = path.join(dir, 'run.jsonl');
    const sink = JsonlHistorySink.open(file, { runId: 'r' });
    let recorded: string[];
    try {
      const fetch = recordFetch({ sink });
      const client = new Anthropic({ apiKey: KEY, baseURL: server.baseURL, fetch, maxRetries: 0 });
      // A turn first: the exchanges are stamped with the last move before them, which validate checks.
      const agent = new AgentWithStateMachine(createScriptedAgent({ replies: [{ text: 'ok' }] }), {
        sink,
        logger: false,
      });
      await agent.runTurn('go');
      recorded = await anthropicLoop(client, 'find it');
      await fetch.close();
      sink.close();
    } finally {
      await server.close();
    }
    expect(fs.readFileSync(file, 'utf8')).not.toContain(KEY);
    const loaded = await loadHistory(file);
    expect(loaded.exchanges.map((e) => e.seq)).toEqual([loaded.records.length, loaded.records.length]);
    expect(loaded.records.length).toBeGreaterThan(0);
    expect(validateHistory(loaded.entries)).toMatchObject({ ok: true, issues: [] });
    // Every reader takes the file with its exchanges.
    for (const argv of [
      ['inspect', file],
      ['validate', file],
      ['report', file, '-o', path.join(dir, 'r.html')],
      ['export', 'otlp', file, '-o', path.join(dir, 'o.json')],
    ]) {
      const cli = await runCli(...argv);
      expect({ argv, code: cli.code, stderr: cli.stderr.replace(/^agent-sm: wrote.*\n/gm, '') }).toEqual({
        argv,
        code: 0,
        stderr: '',
      });
    }

    const replay = await replayFetch(file);
    const offline = new Anthropic({ apiKey: 'x', baseURL: 'http://127.0.0.1:9', fetch: replay, maxRetries: 0 });
    expect(await anthropicLoop(offline, 'find it')).toEqual(recorded);

    const diverging = await replayFetch(loaded.exchanges);
    const other = new Anthropic({ apiKey: 'x', baseURL: 'http://127.0.0.1:9', fetch: diverging, maxRetries: 2 });
    await expect(anthropicLoop(other, 'find that')).rejects.toThrow(
      'diverged at LLM call 1: body.messages[0].content differs: recorded "find it", sent "find that"',
    );
  });
});

describe('recordFetch redaction', () => {
  it('writes no request header and no credential-named field; a redacted value matches on replay', async () => {
    const file = path.join(dir, 'x.jsonl');
    const inner = async (): Promise<Response> =>
      new Response('{"ok":true}', { headers: { 'content-type': 'application/json', 'set-cookie': 'a=b' } });
    const record = recordFetch({ file, fetch: inner });
    await record('https://h/openai/deployments/d/chat?api-key=SECRET&api-version=1', {
      method: 'POST',
      headers: { authorization: 'Bearer SECRET', 'api-key': 'SECRET' },
      body: JSON.stringify({ model: 'm', password: 'SECRET' }),
    });
    await record.close();
    const text = fs.readFileSync(file, 'utf8');
    expect(text).not.toContain('SECRET');
    expect(text).not.toContain('set-cookie');
    const [exchange] = (await loadHistory(file)).exchanges;
    expect(exchange!.request).toEqual({
      method: 'POST',
      path: '/openai/deployments/d/chat',
      query: { 'api-key': '[redacted]', 'api-version': '1' },
      body: { model: 'm', password: '[redacted]' },
    });
    const replay = await replayFetch(file);
    const answer = await replay('https://other/openai/deployments/d/chat?api-key=OTHER&api-version=1', {
      method: 'POST',
      body: JSON.stringify({ model: 'm', password: 'OTHER' }),
    });
    expect(await answer.json()).toEqual({ ok: true });
    expect(answer.headers.get('content-type')).toBe('application/json');
  });
});

describe('recordFetch bodies', () => {
  it('records a body that broke off with what came and why, and the replay breaks off the same way', async () => {
    const file = path.join(dir, 'cut.jsonl');
    let sent = false;
    const inner = async (): Promise<Response> =>
      new Response(
        // The first read gets a chunk, the next one the error: as a connection cut mid-stream does.
        new ReadableStream<Uint8Array>(
          {
            pull(controller) {
              if (sent) return controller.error(new Error('socket hang up'));
              sent = true;
              controller.enqueue(new TextEncoder().encode('data: {"a":1}\n\n'));
            },
          },
          { highWaterMark: 0 },
        ),
        { headers: { 'content-type': 'text/event-stream' } },
      );
    const record = recordFetch({ file, fetch: inner });
    const live = await record('https://h/v1/chat/completions', { method: 'POST', body: '{"stream":true}' });
    const liveReader = live.body!.getReader();
    expect(new TextDecoder().decode((await liveReader.read()).value)).toBe('data: {"a":1}\n\n');
    await expect(liveReader.read()).rejects.toThrow('socket hang up');
    await record.close();
    const [exchange] = (await loadHistory(file)).exchanges;
    expect(exchange).toMatchObject({
      response: { status: 200, body: 'data: {"a":1}\n\n', headers: { 'content-type': 'text/event-stream' } },
      error: { message: 'socket hang up' },
    });
    const replay = await replayFetch(file);
    const again = await replay('https://h/v1/chat/completions', { method: 'POST', body: '{"stream":true}' });
    const reader = again.body!.getReader();
    expect(new TextDecoder().decode((await reader.read()).value)).toBe('data: {"a":1}\n\n');
    await expect(reader.read()).rejects.toThrow('socket hang up');
  });

  it('numbers calls in the order they were sent, though a later one may be written first', async () => {
    const file = path.join(dir, 'order.jsonl');
    let release!: () => void;
    const slow = new Promise<void>((resolve) => (release = resolve));
    const inner = async (_input: string | URL | Request, init?: RequestInit): Promise<Response> => {
      const n = String(init?.body);
      if (n === '1')
        return new Response(
          new ReadableStream<Uint8Array>({
            async start(controller) {
              await slow;
              controller.enqueue(new TextEncoder().encode('first'));
              controller.close();
            },
          }),
        );
      return new Response('second');
    };
    const record = recordFetch({ file, fetch: inner });
    const first = await record('https://h/x', { method: 'POST', body: '1' });
    const second = await record('https://h/x', { method: 'POST', body: '2' });
    expect(await second.text()).toBe('second');
    release();
    expect(await first.text()).toBe('first');
    await record.close();
    expect((await loadHistory(file)).exchanges.map((e) => e.call)).toEqual([2, 1]);
    const replay = await replayFetch(file);
    expect(await (await replay('https://h/x', { method: 'POST', body: '1' })).text()).toBe('first');
    expect(await (await replay('https://h/x', { method: 'POST', body: '2' })).text()).toBe('second');
  });

  it('refuses options it cannot use, naming them', () => {
    expect(() => recordFetch({} as never)).toThrow('exactly one of sink (a history sink) or file (a path)');
    expect(() => recordFetch({ sink: {} as never })).toThrow('a history sink with a journal method');
    expect(() => recordFetch({ file: path.join(dir, 'f.jsonl'), fetch: 3 as never })).toThrow('a fetch function');
  });
});
