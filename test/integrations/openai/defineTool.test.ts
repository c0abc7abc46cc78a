// A tool whose input is typed from its JSON Schema: `run` sees the schema's type (checked by the
// type-check of this file: each @ts-expect-error must be an error), and the loop checks the
// input against the same schema before `run`, so the type holds at run time.
import OpenAI from 'openai';
import { AgentWithStateMachine } from 'agent-state-machine';
import { defineTool, fromOpenAIChat } from '../../../lib/integrations/openai';
import { defineTool as defineAnthropicTool } from '../../../lib/integrations/anthropic';
import { startOpenAIChatServer, type OpenAIChatServer } from '../../../examples/servers/openaiChatServer';

let server: OpenAIChatServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const seen: Array<{ path: string; lines?: number }> = [];
const readFile = defineTool({
  description: 'Reads a file',
  parameters: {
    type: 'object',
    properties: { path: { type: 'string' }, lines: { type: 'integer' } },
    required: ['path'],
    additionalProperties: false,
  },
  run: (input) => {
    const path: string = input.path;
    const lines: number | undefined = input.lines;
    // @ts-expect-error -- not in the schema
    void input.mode;
    // @ts-expect-error -- a string, not a number
    const wrong: number = input.path;
    void wrong;
    seen.push(input);
    return `${path}: ${lines ?? 'all'} lines`;
  },
});

describe('defineTool', () => {
  it("types run's input from the schema, and the loop hands run inputs that match it", async () => {
    server = await startOpenAIChatServer({
      respond: (_body, i) =>
        i === 0
          ? { toolCalls: [{ id: 'call_1', name: 'read_file', arguments: '{"path":"a.txt","lines":3}' }] }
          : i === 1
            ? // An input the schema refuses: run is never called with it.
              { toolCalls: [{ id: 'call_2', name: 'read_file', arguments: '{"lines":"3"}' }] }
            : { content: 'done' },
    });
    const loop = fromOpenAIChat(new OpenAI({ apiKey: 'sk-local', baseURL: server.baseURL }), {
      model: 'gpt-4o-mini',
      maxTokens: 100,
      tools: { read_file: readFile },
    });
    const agent = new AgentWithStateMachine(loop, { logger: false });
    const result = await agent.runTurn('Read a.txt');
    expect(result.outcome).toBe('end_of_turn');
    expect(seen).toEqual([{ path: 'a.txt', lines: 3 }]);
    expect(server.rejected).toEqual([]);
  });

  it('is the same helper for the Anthropic loop, and returns the tool as it is', () => {
    const tool = { parameters: { type: 'object', properties: {} }, run: () => 'ok' } as const;
    expect(defineAnthropicTool(tool)).toBe(tool);
    expect(defineAnthropicTool).toBe(defineTool);
  });
});
