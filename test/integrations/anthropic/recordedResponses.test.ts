import Anthropic from '@anthropic-ai/sdk';
import { fromAnthropic, mapAnthropicUsage, type AnthropicOptions } from '../../../lib/integrations/anthropic';
import { recordedFetch } from '../../fixtures/recordedFetch';
import { agentOf } from '../../helpers/sdkLoopTest';

// Responses recorded by Anthropic's SDK, or built from Anthropic's documented examples where no
// recording exists (test/fixtures/anthropic/NOTICE.md), read by the real `@anthropic-ai/sdk`
// client through a fake `fetch` and run through the ready-made loop.

/** A tool that records the input it was run with. */
function recordingTool(name: string): { tool: NonNullable<AnthropicOptions['tools']>[string]; inputs: unknown[] } {
  const inputs: unknown[] = [];
  return {
    inputs,
    tool: {
      description: `The ${name} tool`,
      parameters: { type: 'object' },
      run: async (input: unknown) => {
        inputs.push(input);
        return `${name} ran`;
      },
    },
  };
}

function loopOn(files: string[], extra: Partial<AnthropicOptions> = {}) {
  const recorded = recordedFetch('anthropic', files);
  const client = new Anthropic({ apiKey: 'sk-ant-local', fetch: recorded.fetch });
  const query = recordingTool('query_database');
  const weather = recordingTool('get_weather');
  const loop = fromAnthropic(client, {
    model: 'claude-sonnet-4-6',
    tools: { query_database: query.tool, get_weather: weather.tool },
    ...extra,
  });
  return { loop, recorded, query, weather };
}

const ctx = () => ({ signal: new AbortController().signal, turn: 1, attempt: 1 });

describe('fromAnthropic on recorded responses', () => {
  describe.each([
    ['streamed', true, ['programmatic_tool_call.sse', 'compaction_usage.sse']],
    ['not streamed', false, ['programmatic_tool_call.json', 'compaction_usage.json']],
  ] as const)('%s', (_mode, stream, files) => {
    it('runs a programmatic tool call with the input its block started with, and the turn goes on to the answer', async () => {
      const { loop, recorded, query } = loopOn([...files], { stream });
      const result = await agentOf(loop).runTurn('Query the database');
      expect(query.inputs).toEqual([{ sql: '<sql>' }]);
      expect(result).toMatchObject({
        outcome: 'end_of_turn',
        text: 'Based on our conversation so far, here is the plan.',
      });
      // 1,520 / 96 for the tool call; the compaction answer bills its iterations: 180,000 + 23,000 / 3,500 + 1,000.
      expect(result.usage).toMatchObject({ inputTokens: 1520 + 203_000, outputTokens: 96 + 4500, llmCalls: 2 });
      expect(loop.messages[1]).toEqual({
        role: 'assistant',
        content: [
          {
            type: 'server_tool_use',
            id: 'srvtoolu_abc123',
            name: 'code_execution',
            input: { code: "results = await query_database('<sql>')\nprint(results)" },
          },
          { type: 'tool_use', id: 'toolu_xyz789', name: 'query_database', input: { sql: '<sql>' } },
        ],
      });
      expect((recorded.requests[1]!.messages as { content: unknown }[])[2]!.content).toEqual([
        { type: 'tool_result', tool_use_id: 'toolu_xyz789', content: 'query_database ran' },
      ]);
    });
  });

  it('streamed: keeps a message that arrives complete in message_start, so its tool runs and the turn goes on', async () => {
    const texts: string[] = [];
    const { loop, query } = loopOn(['message_in_start.sse', 'basic_response.sse'], {
      stream: { onText: (delta) => texts.push(delta) },
    });
    const result = await agentOf(loop).runTurn('Query the database');
    expect(query.inputs).toEqual([{ sql: '<sql>' }]);
    expect(result).toMatchObject({ outcome: 'end_of_turn', text: 'Hello there!' });
    expect(result.usage).toMatchObject({ inputTokens: 410 + 11, outputTokens: 38 + 6, llmCalls: 2, toolCalls: 1 });
    expect(texts).toEqual(['Querying it.', 'Hello', ' there', '!']);
  });

  it('streamed: keeps the input a server_tool_use streams (recorded web search), with usage from its iterations', async () => {
    const { loop } = loopOn(['web_search_refusal.sse'], { stream: true });
    const response = await loop.sendUserMessage('Any eclipse news?', ctx());
    expect(loop.messages[1]!.content).toContainEqual(
      expect.objectContaining({
        type: 'server_tool_use',
        id: 'srvtoolu_fixture_a_0001',
        input: { query: 'solar eclipse viewing safety news 2026' },
      }),
    );
    expect(response).toMatchObject({
      text: "Here's a summary of this year's solar eclipses and how",
      usage: { inputTokens: 28, outputTokens: 106, cachedInputTokens: 0, cacheWriteTokens: 0, reasoningTokens: 67 },
      finishReason: 'refusal',
    });
  });

  it('streamed: still reads tool input streamed as input_json_delta (recorded tool use)', async () => {
    const { loop, weather } = loopOn(['tool_use_response.sse', 'basic_response.sse'], { stream: true });
    const result = await agentOf(loop).runTurn('Weather in Paris?');
    expect(weather.inputs).toEqual([{ location: 'Paris' }]);
    expect(result).toMatchObject({ outcome: 'end_of_turn', text: 'Hello there!' });
    expect(result.usage).toMatchObject({ inputTokens: 377 + 11, outputTokens: 65 + 6, llmCalls: 2 });
  });

  it('charges what was billed for the reported compaction run: 61,067 in / 1,912 out, not the top-level 682 / 1,320', async () => {
    const { loop } = loopOn(['compaction_reported.json']);
    const response = await loop.sendUserMessage('Go on', ctx());
    expect(response.usage).toEqual({
      inputTokens: 61_067,
      outputTokens: 1912,
      cachedInputTokens: 600,
      cacheWriteTokens: 0,
      reasoningTokens: undefined,
    });
  });
});

/** Usage as the wire sends it, `iterations` included (the SDK declares it in its beta types only). */
const mapped = (usage: object) => mapAnthropicUsage(usage as Parameters<typeof mapAnthropicUsage>[0]);

describe('mapAnthropicUsage', () => {
  it('counts cache reads and writes in every iteration as input', () => {
    const iteration = {
      input_tokens: 10,
      output_tokens: 5,
      cache_read_input_tokens: 100,
      cache_creation_input_tokens: 20,
    };
    expect(
      mapped({
        input_tokens: 10,
        output_tokens: 5,
        iterations: [iteration, { ...iteration, type: 'compaction' }],
      }),
    ).toMatchObject({ inputTokens: 260, outputTokens: 10, cachedInputTokens: 200, cacheWriteTokens: 40 });
  });

  it('leaves a total unknown when an iteration lacks its count, never reading it as 0', () => {
    const usage = mapped({
      input_tokens: 23_000,
      output_tokens: 1000,
      iterations: [
        { type: 'compaction', output_tokens: 3500 },
        { type: 'message', input_tokens: 23_000, output_tokens: 1000 },
      ],
    });
    expect(usage).toMatchObject({ inputTokens: undefined, outputTokens: 4500 });
  });

  it('reads the top level when there are no iterations (an empty array included)', () => {
    expect(mapped({ input_tokens: 7, output_tokens: 3, iterations: [] })).toMatchObject({
      inputTokens: 7,
      outputTokens: 3,
    });
  });
});
