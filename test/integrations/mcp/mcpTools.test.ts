import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { AgentWithStateMachine, InvalidArgumentError, type ToolCallEvent } from 'agent-state-machine';
import { fromAnthropic } from '../../../lib/integrations/anthropic';
import { fromAISDK } from '../../../lib/integrations/ai-sdk';
import {
  McpToolError,
  mcpTools,
  type McpClient,
  type McpTools,
  type McpToolsChange,
} from '../../../lib/integrations/mcp';
import { fromOpenAIChat, fromOpenAIResponses } from '../../../lib/integrations/openai';
import {
  startAnthropicMessagesServer,
  type AnthropicMessagesServer,
} from '../../../examples/servers/anthropicMessagesServer';
import {
  startOpenAIChatServer,
  type ChatAction,
  type OpenAIChatServer,
} from '../../../examples/servers/openaiChatServer';
import {
  startOpenAIResponsesServer,
  type OpenAIResponsesServer,
} from '../../../examples/servers/openaiResponsesServer';
import { startMcpServer, type McpServerProcess } from '../../helpers/mcpServerProcess';
import { call, scriptedModel, text } from '../ai-sdk/scriptedModel';

// A real MCP server (test/fixtures/mcp/server.ts, the SDK's own McpServer) as a child process
// over stdio, and the loops against the strict local servers. The MCP server reports what it
// saw on stderr, so the tests wait for events ("the slow tool started") instead of times.

let mcp: McpServerProcess | undefined;
let chat: OpenAIChatServer | undefined;
let toClose: { close(): Promise<void> }[] = [];
afterEach(async () => {
  await Promise.all([mcp?.close(), chat?.close(), ...toClose.map((s) => s.close())]);
  mcp = chat = undefined;
  toClose = [];
});

/** The MCP server, the set of its tools, and a Chat Completions agent on them whose "model" is `respond`. */
async function setUp(respond: (body: ChatBody, i: number) => ChatAction, options: Parameters<typeof mcpTools>[1] = {}) {
  mcp = await startMcpServer();
  const tools = await mcpTools(mcp.client, options);
  chat = await startOpenAIChatServer({ respond });
  const loop = fromOpenAIChat(new OpenAI({ apiKey: 'sk-local', baseURL: chat.baseURL }), {
    model: 'gpt-4o-mini',
    tools: tools.tools,
  });
  const agent = new AgentWithStateMachine(loop, { logger: false });
  const calls: ToolCallEvent[] = [];
  agent.on('toolCall', (e) => calls.push(e));
  return { server: mcp, tools, chat, loop, agent, calls };
}

interface ChatBody {
  messages: { role: string; content?: unknown; tool_call_id?: string }[];
  tools?: { function: { name: string } }[];
}

/** Asks for one tool call on the first request of each turn, and answers with the tool's output after it. */
const callThen =
  (name: string, args: unknown) =>
  (body: ChatBody): ChatAction =>
    body.messages.at(-1)?.role === 'tool'
      ? { content: `saw: ${String(body.messages.at(-1)!.content)}` }
      : { toolCalls: [{ name, arguments: JSON.stringify(args) }] };

const toolNames = (body: ChatBody): string[] => (body.tools ?? []).map((t) => t.function.name);

describe('mcpTools', () => {
  it("offers the server's tools under names the providers accept, and runs one through a whole turn", async () => {
    const { server, tools, chat, agent, calls } = await setUp(callThen('notes_read', { name: 'groceries' }));
    expect(Object.keys(tools.tools)).toEqual([
      'echo',
      'notes_read',
      'slow',
      'fail',
      'stats',
      'crash',
      'add_tool',
      'remove_tool',
    ]);
    expect(tools.tools.notes_read).toMatchObject({
      mcpName: 'notes.read',
      description: 'Reads a note',
      parameters: { type: 'object', required: ['name'] },
    });
    expect(tools.server).toBe('asm-test-server');

    const result = await agent.runTurn('What does the groceries note say?');
    expect(result).toMatchObject({ outcome: 'end_of_turn', text: 'saw: note groceries: buy milk' });
    expect(calls.map((c) => [c.call.name, c.status, c.result.output])).toEqual([
      ['notes_read', 'ok', 'note groceries: buy milk'],
    ]);
    expect(toolNames(chat.exchanges[0]!.body)).toEqual(Object.keys(tools.tools));
    expect(chat.rejected).toEqual([]);
    await server.sync();
    expect(server.events.filter((e) => e.event === 'request').map((e) => [e.method, e.tool])).toEqual([
      ['initialize', undefined],
      ['tools/list', undefined],
      ['tools/call', 'notes.read'],
      ['ping', undefined],
    ]);
    expect(server.events.filter((e) => e.event === 'notifications/cancelled')).toEqual([]);
  });

  it("checks input against the server's schema: a bad call is answered with the validator's message and never sent", async () => {
    const { server, chat, agent, calls } = await setUp(callThen('echo', { text: 42 }));
    const result = await agent.runTurn('Echo 42');
    expect(result.outcome).toBe('end_of_turn');
    expect(calls[0]).toMatchObject({
      status: 'error',
      result: {
        isError: true,
        output:
          'error: the arguments of echo do not match its input schema: input.text must be string; send them again, corrected',
      },
    });
    await server.sync();
    expect(server.events.filter((e) => e.method === 'tools/call')).toEqual([]);
    expect(chat.rejected).toEqual([]);
  });

  it('passes valid input through to the server as the LLM wrote it', async () => {
    const { server, agent, calls } = await setUp(callThen('echo', { text: 'ab', times: 2 }));
    await agent.runTurn('Echo ab twice');
    expect(calls[0]).toMatchObject({ status: 'ok', result: { output: 'echo: abab' } });
    expect(await server.waitFor((e) => e.event === 'called')).toMatchObject({
      tool: 'echo',
      args: { text: 'ab', times: 2 },
    });
  });

  it("turns a result with isError into an error result, with the server's text", async () => {
    const { chat, agent, calls } = await setUp(callThen('fail', {}));
    const result = await agent.runTurn('Try it');
    expect(result).toMatchObject({ outcome: 'end_of_turn', text: 'saw: disk full: /var is at 100%' });
    expect(calls[0]).toMatchObject({
      status: 'error',
      result: { isError: true, output: 'disk full: /var is at 100%' },
    });
    expect(chat.rejected).toEqual([]);
  });

  it('keeps text and structured content: the JSON follows the text', async () => {
    const { agent, calls } = await setUp(callThen('stats', {}));
    await agent.runTurn('How many notes?');
    expect(calls[0]).toMatchObject({
      status: 'ok',
      result: { output: 'There are 3 notes.\n{"count":3,"largest":"groceries"}' },
    });
  });

  it('cancels a running tool on its server: agent.cancel() reaches it as notifications/cancelled for that request', async () => {
    const { server, chat, agent, calls } = await setUp((body, i) =>
      i === 0 ? { toolCalls: [{ name: 'slow', arguments: '{}' }] } : { content: `answer ${i}` },
    );
    const turn = agent.runTurn('Do the slow thing');
    const started = await server.waitFor((e) => e.event === 'started' && e.tool === 'slow');
    expect(agent.cancel('user pressed Esc')).toBe(true);
    const result = await turn;

    expect(result.outcome).toBe('cancelled');
    expect(calls[0]).toMatchObject({
      status: 'interrupted',
      result: { isError: true, output: expect.stringMatching(/^interrupted: user pressed Esc/) },
    });
    const cancelled = await server.waitFor((e) => e.event === 'notifications/cancelled');
    expect(cancelled).toMatchObject({
      requestId: started.requestId,
      reason: expect.stringContaining('user pressed Esc'),
    });
    expect(await server.waitFor((e) => e.event === 'aborted')).toMatchObject({
      tool: 'slow',
      requestId: started.requestId,
    });
    // The conversation stays valid, and the server still answers.
    expect(await agent.runTurn('And now?')).toMatchObject({ outcome: 'end_of_turn', text: 'answer 1' });
    expect(chat.rejected).toEqual([]);
  });

  it('ends a call whose server stops answering after timeoutMs, with an error result, and cancels it on the server', async () => {
    const { server, agent, calls } = await setUp(callThen('slow', {}), { timeoutMs: 300 });
    const result = await agent.runTurn('Do the slow thing');
    expect(result.outcome).toBe('end_of_turn');
    expect(calls[0]).toMatchObject({
      status: 'error',
      result: {
        isError: true,
        output:
          'MCP server "asm-test-server" did not answer tool "slow" within 300 ms (the timeoutMs option); the call was cancelled on the server',
      },
    });
    // Read off the wire: the handler may not even have started when a loaded machine cancels it.
    const request = await server.waitFor((e) => e.method === 'tools/call' && e.tool === 'slow');
    expect(await server.waitFor((e) => e.event === 'notifications/cancelled')).toMatchObject({
      requestId: request.requestId,
      reason: expect.stringContaining('Request timed out'),
    });
  });

  it('answers a call whose server crashed with a clear error result, and the turn ends normally', async () => {
    const { server, chat, agent, calls } = await setUp(callThen('crash', {}));
    const result = await agent.runTurn('Crash it');
    expect(result.outcome).toBe('end_of_turn');
    expect(calls[0]).toMatchObject({
      status: 'error',
      result: {
        isError: true,
        output:
          'MCP server "asm-test-server" closed the connection while tool "crash" ran: the server exited or crashed (MCP error -32000: Connection closed)',
      },
    });
    await server.exited;
    // Later calls fail at once, naming the server, without a request.
    const again = await agent.runTurn('Crash it again');
    expect(again.outcome).toBe('end_of_turn');
    expect(calls[1]?.result.output).toBe(
      'MCP server "asm-test-server" is not connected (its connection closed earlier): tool "crash" was not called',
    );
    expect(chat.rejected).toEqual([]);
  });

  it('follows list_changed: a tool the server adds is offered from the next request, one it removes is gone', async () => {
    const changes: McpToolsChange[] = [];
    const { tools, chat, agent, calls } = await setUp(
      (body, i) =>
        [
          { toolCalls: [{ name: 'add_tool', arguments: '{"name":"weather.now"}' }] },
          { toolCalls: [{ name: 'weather_now', arguments: '{"value":"Oslo"}' }] },
          { content: 'done' },
          { toolCalls: [{ name: 'remove_tool', arguments: '{"name":"weather.now"}' }] },
          { content: 'removed' },
        ][i] ?? { content: `unexpected request ${i}` },
      { onChange: (c) => changes.push(c) },
    );
    expect(await agent.runTurn('Add a weather tool and use it')).toMatchObject({
      outcome: 'end_of_turn',
      text: 'done',
    });
    expect(calls.map((c) => [c.call.name, c.status, c.result.output])).toEqual([
      ['add_tool', 'ok', 'added weather.now'],
      ['weather_now', 'ok', 'weather.now: Oslo'],
    ]);
    expect(toolNames(chat.exchanges[0]!.body)).not.toContain('weather_now');
    expect(toolNames(chat.exchanges[1]!.body)).toContain('weather_now');
    expect(tools.tools.weather_now).toMatchObject({
      mcpName: 'weather.now',
      description: 'Added at run time: weather.now',
    });

    expect(await agent.runTurn('Remove it')).toMatchObject({ outcome: 'end_of_turn', text: 'removed' });
    expect(toolNames(chat.exchanges[4]!.body)).not.toContain('weather_now');
    expect(changes).toEqual([
      { added: ['weather_now'], removed: [], changed: [] },
      { added: [], removed: ['weather_now'], changed: [] },
    ]);
    expect(chat.rejected).toEqual([]);
  });

  it('works with the Responses loop', async () => {
    mcp = await startMcpServer();
    const tools = await mcpTools(mcp.client);
    const server: OpenAIResponsesServer = await startOpenAIResponsesServer({
      respond: (_body, i) => (i === 0 ? { toolCalls: [{ name: 'fail', arguments: '{}' }] } : { text: 'it failed' }),
    });
    toClose.push(server);
    const loop = fromOpenAIResponses(new OpenAI({ apiKey: 'sk-local', baseURL: server.baseURL }), {
      model: 'gpt-4.1-mini',
      tools: tools.tools,
    });
    const result = await new AgentWithStateMachine(loop, { logger: false }).runTurn('Try it');
    expect(result).toMatchObject({ outcome: 'end_of_turn', text: 'it failed' });
    expect(loop.items).toContainEqual({
      type: 'function_call_output',
      call_id: expect.any(String),
      output: 'disk full: /var is at 100%',
    });
    expect(server.rejected).toEqual([]);
  });

  it('works with the Anthropic loop, which marks the error result is_error', async () => {
    mcp = await startMcpServer();
    const tools = await mcpTools(mcp.client);
    const server: AnthropicMessagesServer = await startAnthropicMessagesServer({
      respond: (_body, i) =>
        i === 0 ? { toolUses: [{ id: 'toolu_1', name: 'fail', input: {} }] } : { text: 'it failed' },
    });
    toClose.push(server);
    const loop = fromAnthropic(new Anthropic({ apiKey: 'sk-ant-local', baseURL: server.baseURL }), {
      model: 'claude-sonnet-4-6',
      tools: tools.tools,
    });
    const result = await new AgentWithStateMachine(loop, { logger: false }).runTurn('Try it');
    expect(result).toMatchObject({ outcome: 'end_of_turn', text: 'it failed' });
    expect(loop.messages[2]).toEqual({
      role: 'user',
      content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'disk full: /var is at 100%', is_error: true }],
    });
    expect(server.rejected).toEqual([]);
  });

  describe('.aiSdkTools', () => {
    it("runs through fromAISDK: a valid call reaches the server, a bad one gets the validator's message and does not", async () => {
      mcp = await startMcpServer();
      const tools = await mcpTools(mcp.client);
      const model = scriptedModel([
        { content: [call('c1', 'echo', { text: 'hi' }), call('c2', 'echo', { text: 7 })] },
        { content: [text('done')] },
      ]);
      const agent = new AgentWithStateMachine(fromAISDK({ model, tools: tools.aiSdkTools }), { logger: false });
      const calls: ToolCallEvent[] = [];
      agent.on('toolCall', (e) => calls.push(e));
      expect(await agent.runTurn('Echo')).toMatchObject({ outcome: 'end_of_turn', text: 'done' });
      expect(calls[0]).toMatchObject({ status: 'ok', result: { output: 'echo: hi' } });
      expect(calls[1]).toMatchObject({
        status: 'error',
        result: {
          isError: true,
          output: expect.stringContaining(
            'the arguments of echo do not match its input schema: input.text must be string',
          ),
        },
      });
      await mcp.sync();
      expect(mcp.events.filter((e) => e.event === 'called').map((e) => e.args)).toEqual([{ text: 'hi' }]);
      // The model saw the server's schema (the AI SDK adds additionalProperties: false to its own copy).
      expect(model.doGenerateCalls[0]!.tools?.find((t) => t.name === 'echo')).toMatchObject({
        inputSchema: { type: 'object', required: ['text'], properties: { text: { type: 'string' } } },
      });
      expect(tools.tools.echo!.parameters).not.toHaveProperty('additionalProperties');
    });

    it('throws McpToolError for a result with isError, which the adapter sends as an error result', async () => {
      mcp = await startMcpServer();
      const tools = await mcpTools(mcp.client);
      await expect(tools.aiSdkTools.fail!.execute({}, {})).rejects.toMatchObject({
        name: 'McpToolError',
        code: 'tool_error',
        server: 'asm-test-server',
        tool: 'fail',
        message: 'disk full: /var is at 100%',
      });
    });
  });

  describe('.runTool()', () => {
    it('runs a call as AgentLoop.runTool does, for a loop of your own', async () => {
      mcp = await startMcpServer();
      const tools = await mcpTools(mcp.client);
      const ctx = { signal: new AbortController().signal, turn: 1 };
      expect(await tools.runTool({ id: 'c1', name: 'notes_read', input: '{"name":"todo"}' }, ctx)).toEqual({
        callId: 'c1',
        output: 'note todo: buy milk',
      });
      expect(await tools.runTool({ id: 'c2', name: 'fail', input: {} }, ctx)).toEqual({
        callId: 'c2',
        output: 'disk full: /var is at 100%',
        isError: true,
      });
      expect(await tools.runTool({ id: 'c3', name: 'notes.read', input: {} }, ctx)).toMatchObject({
        callId: 'c3',
        isError: true,
        output: expect.stringMatching(/^error: there is no tool named "notes.read"/),
      });
    });
  });

  describe('options', () => {
    it('prefix, filter and name: tools of several servers can share one record', async () => {
      mcp = await startMcpServer();
      const tools = await mcpTools(mcp.client, {
        prefix: 'notes_',
        name: 'notes',
        filter: (t) => t.name === 'echo' || t.name === 'fail',
      });
      expect(Object.keys(tools.tools)).toEqual(['notes_echo', 'notes_fail']);
      expect(tools.skipped.map((s) => s.mcpName)).toEqual([
        'notes.read',
        'slow',
        'stats',
        'crash',
        'add_tool',
        'remove_tool',
      ]);
      expect(tools.skipped[0]).toEqual({ mcpName: 'notes.read', reason: 'left out by the filter option' });
      expect(tools.server).toBe('notes');
    });

    it('.refresh() lists again; .stopWatching() stops following list_changed', async () => {
      mcp = await startMcpServer();
      const changes: McpToolsChange[] = [];
      const tools: McpTools = await mcpTools(mcp.client, { onChange: (c) => changes.push(c) });
      tools.stopWatching();
      await tools.runTool(
        { id: 'c1', name: 'add_tool', input: { name: 'late' } },
        { signal: new AbortController().signal, turn: 1 },
      );
      expect(tools.tools.late).toBeUndefined();
      await tools.refresh();
      expect(tools.tools.late).toMatchObject({ mcpName: 'late' });
      expect(changes).toEqual([{ added: ['late'], removed: [], changed: [] }]);
    });

    it('throws InvalidArgumentError naming a bad argument', async () => {
      mcp = await startMcpServer();
      const client = mcp.client;
      await expect(mcpTools({} as never)).rejects.toThrow(InvalidArgumentError);
      await expect(mcpTools(client, { prefix: 'a.b' })).rejects.toThrow(
        'Expected `options.prefix` to be a string of 1–48 letters, digits, _ or - (tool names allow no other characters), got `a.b` (string)',
      );
      await expect(mcpTools(client, { timeoutMs: 0 })).rejects.toThrow(
        'Expected `options.timeoutMs` to be a positive integer of milliseconds, at most 2147483647, got `0` (number)',
      );
      await expect(mcpTools(client, { name: '' })).rejects.toThrow(
        'Expected `options.name` to be a non-empty string or undefined, got `` (string)',
      );
      await expect(mcpTools(client, { watch: 'yes' as never })).rejects.toThrow(
        'Expected `options.watch` to be a boolean or undefined',
      );
      await expect(mcpTools(client, { onChange: 1 as never })).rejects.toThrow(
        'Expected `options.onChange` to be a function or undefined',
      );
      await client.close();
      await expect(mcpTools(client)).rejects.toThrow(
        'Expected `client` to be a connected MCP Client (await client.connect(transport) first)',
      );
    });
  });

  // What a real server rarely does, from a stand-in client.
  describe('with a stand-in client', () => {
    const echoTool = {
      name: 'echo',
      inputSchema: { type: 'object' as const, properties: { text: { type: 'string' } } },
    };

    function fakeClient(overrides: Partial<Record<keyof McpClient, unknown>> = {}) {
      let onListChanged: (() => void) | undefined;
      const client = {
        transport: {},
        getServerVersion: () => ({ name: 'fake', version: '1' }),
        getServerCapabilities: () => ({ tools: { listChanged: true } }),
        listTools: async () => ({ tools: [echoTool] }),
        callTool: async () => ({ content: [{ type: 'text', text: 'ok' }] }),
        setNotificationHandler: (_schema: unknown, handler: () => void) => {
          onListChanged = handler;
        },
        removeNotificationHandler: () => {
          onListChanged = undefined;
        },
        ...overrides,
      };
      return { client: client as unknown as McpClient, listChanged: () => onListChanged?.() };
    }
    const ctx = { signal: new AbortController().signal, turn: 1 };

    it('refuses a server that offers no tools', async () => {
      const { client } = fakeClient({ getServerCapabilities: () => ({ resources: {} }) });
      await expect(mcpTools(client)).rejects.toMatchObject({
        name: 'McpToolError',
        code: 'list_failed',
        message: 'MCP server "fake" offers no tools (its capabilities have no "tools")',
      });
    });

    it('stops listing a server that hands out the same page cursor twice', async () => {
      const { client } = fakeClient({ listTools: async () => ({ tools: [echoTool], nextCursor: 'p2' }) });
      await expect(mcpTools(client)).rejects.toThrow(
        'could not list the tools of MCP server "fake": it sent the page cursor "p2" twice',
      );
    });

    it('reads every page of the list', async () => {
      const pages: Record<string, { tools: unknown[]; nextCursor?: string }> = {
        first: { tools: [echoTool], nextCursor: 'p2' },
        p2: { tools: [{ ...echoTool, name: 'echo2' }] },
      };
      const { client } = fakeClient({
        listTools: async (params?: { cursor?: string }) => pages[params?.cursor ?? 'first'],
      });
      expect(Object.keys((await mcpTools(client)).tools)).toEqual(['echo', 'echo2']);
    });

    it('skips a tool whose schema no validator can compile, and one that runs only as a task, saying why', async () => {
      const broken = {
        name: 'broken',
        inputSchema: { type: 'object', properties: { n: { type: 'integer', minimum: 'one' } } },
      };
      const task = { ...echoTool, name: 'task', execution: { taskSupport: 'required' } };
      const { client } = fakeClient({ listTools: async () => ({ tools: [echoTool, broken, task] }) });
      const tools = await mcpTools(client);
      expect(Object.keys(tools.tools)).toEqual(['echo']);
      expect(tools.skipped).toEqual([
        { mcpName: 'broken', reason: expect.stringMatching(/^its input schema cannot be compiled: /) },
        { mcpName: 'task', reason: 'it runs only as a task (tasks/…), which this integration does not call' },
      ]);
    });

    it('answers a call the server rejects with a JSON-RPC error with an error naming the server and the tool', async () => {
      const { client } = fakeClient({
        callTool: async () =>
          Promise.reject(Object.assign(new Error('MCP error -32602: Tool echo not found'), { code: -32602 })),
      });
      const tools = await mcpTools(client);
      await expect(tools.tools.echo!.run({}, ctx)).rejects.toMatchObject({
        code: 'call_failed',
        message: 'MCP server "fake" answered tool "echo" with an error: MCP error -32602: Tool echo not found',
      });
    });

    it('reports a refresh a notification started that failed to onError, and keeps the tools it had', async () => {
      let lists = 0;
      const { client, listChanged } = fakeClient({
        listTools: async () => (++lists === 1 ? { tools: [echoTool] } : Promise.reject(new Error('server busy'))),
      });
      const reported = new Promise<unknown>(
        (resolve) => void mcpTools(client, { onError: resolve }).then(() => listChanged()),
      );
      expect(await reported).toMatchObject({
        code: 'list_failed',
        message: 'could not list the tools of MCP server "fake": server busy',
      });
    });

    it('without onError, such a failure becomes a process warning, not an unhandled rejection', async () => {
      let lists = 0;
      const { client, listChanged } = fakeClient({
        listTools: async () => (++lists === 1 ? { tools: [echoTool] } : Promise.reject(new Error('server busy'))),
      });
      const tools = await mcpTools(client);
      const warned = new Promise<unknown[]>((resolve) =>
        jest.spyOn(process, 'emitWarning').mockImplementationOnce((...args: unknown[]) => resolve(args)),
      );
      listChanged();
      expect(await warned).toEqual([
        'could not list the tools of MCP server "fake": server busy',
        { type: 'McpToolError' },
      ]);
      expect(Object.keys(tools.tools)).toEqual(['echo']);
    });
  });

  it('McpToolError carries the code, the server and the tool', () => {
    const error = new McpToolError('timeout', 'too slow', { server: 's', tool: 't', cause: 'why' });
    expect(error).toMatchObject({
      name: 'McpToolError',
      code: 'timeout',
      server: 's',
      tool: 't',
      message: 'too slow',
      cause: 'why',
    });
    expect(error).toBeInstanceOf(Error);
  });
});
