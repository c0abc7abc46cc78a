// Your own loop on the real Anthropic client, at its default settings (two retries of its own),
// observed at the wire: against the local Messages server (a 529 the client retries, released;
// a tool call; a resumed run served from its journal), and against recorded responses (compaction
// iterations, programmatic tool calling), whose usage and cost must be the recording's.
import Anthropic from '@anthropic-ai/sdk';
import {
  meterFetch,
  observeLoop,
  observeTool,
  type JournalLine,
  type Pricing,
  type RecordedLine,
} from 'agent-state-machine';

import { meteredFetch, messagesWire } from '../../lib/integrations/anthropic';
import {
  startAnthropicMessagesServer,
  type AnthropicMessagesServer,
  type MessagesAction,
} from '../../examples/servers/anthropicMessagesServer';
import { fixture, recordedFetch } from '../fixtures/recordedFetch';
import { journalInto } from '../helpers/journalInto';

/** $3 in, $15 out per million tokens; a count not reported is unknown. */
const pricing: Pricing = (u) =>
  u.inputTokens === undefined || u.outputTokens === undefined
    ? undefined
    : (u.inputTokens * 3 + u.outputTokens * 15) / 1e6;

/** The user's loop, as written before the library: only observeTool knows of it. */
async function agent(client: Anthropic, task: string): Promise<string> {
  const messages: Anthropic.MessageParam[] = [{ role: 'user', content: task }];
  const tools: Anthropic.Tool[] = [{ name: 'lookup', input_schema: { type: 'object', properties: {} } }];
  for (;;) {
    const message = await client.messages.create({ model: 'claude-sonnet-4-6', max_tokens: 4096, messages, tools });
    messages.push({ role: 'assistant', content: message.content });
    const uses = message.content.flatMap((b) => (b.type === 'tool_use' ? [b] : []));
    if (uses.length === 0) return message.content.flatMap((b) => (b.type === 'text' ? [b.text] : [])).join('');
    const results: Anthropic.ToolResultBlockParam[] = [];
    for (const use of uses) {
      const output = await observeTool({ id: use.id, name: use.name, input: use.input }, async () => 'found');
      results.push({ type: 'tool_result', tool_use_id: use.id, content: output });
    }
    messages.push({ role: 'user', content: results });
  }
}

describe('against the local Messages server', () => {
  let server: AnthropicMessagesServer;
  let script: MessagesAction[];
  beforeEach(async () => {
    server = await startAnthropicMessagesServer({ respond: (_body, index) => script[index] ?? { text: 'done' } });
  });
  afterEach(() => server.close());
  const client = () => new Anthropic({ baseURL: server.baseURL, apiKey: 'sk-local', fetch: meteredFetch });

  it('charges each request the client sends, its own retry of a 529 released', async () => {
    script = [
      { error: { status: 529, type: 'overloaded_error', message: 'Overloaded' } },
      {
        text: 'Let me look.',
        toolUses: [{ name: 'lookup', input: {} }],
        usage: { input_tokens: 100, output_tokens: 20 },
      },
      { text: 'Found it.', usage: { input_tokens: 150, output_tokens: 10 } },
    ];
    const lines: JournalLine[] = [];
    const { result, value } = await observeLoop(
      { budget: { maxCostUsd: 1 }, pricing, journal: true, logger: false, ...journalInto(lines) },
      'find it',
      () => agent(client(), 'find it'),
    );
    expect(value).toBe('Found it.');
    expect(result.outcome).toBe('end_of_turn');
    expect(server.exchanges).toHaveLength(3);
    expect(server.rejected).toEqual([]);
    expect(result.usage).toMatchObject({
      llmCalls: 3,
      toolCalls: 1,
      inputTokens: 250,
      outputTokens: 30,
      uncertainUsd: 0,
    });
    expect(result.usage.costUsd).toBeCloseTo((250 * 3 + 30 * 15) / 1e6, 12);
    expect(result.usage.releasedUsd).toBeGreaterThan(0);
  });

  it('serves a resumed run its journaled answers at the wire: the loop runs again, no request is sent twice', async () => {
    script = [
      {
        text: 'Let me look.',
        toolUses: [{ name: 'lookup', input: {} }],
        usage: { input_tokens: 100, output_tokens: 20 },
      },
      { text: 'Found it.', usage: { input_tokens: 150, output_tokens: 10 } },
    ];
    const lines: JournalLine[] = [];
    // The first attempt is cut after its first answer and its tool: the loop throws there.
    let calls = 0;
    const cut = meterFetch([messagesWire], async (input, init) => {
      if (++calls === 2) throw new Error('killed');
      return fetch(input, init);
    });
    const first = await observeLoop({ journal: true, logger: false, ...journalInto(lines) }, 'find it', () =>
      agent(new Anthropic({ baseURL: server.baseURL, apiKey: 'sk-local', fetch: cut, maxRetries: 0 }), 'find it'),
    );
    expect(first.result.outcome).toBe('error');
    expect(server.exchanges).toHaveLength(1);
    const resumed = await observeLoop(
      {
        journal: true,
        logger: false,
        resumeFrom: { journal: lines as unknown as RecordedLine[] },
        sink: { write: () => undefined, journal: () => undefined },
      },
      'find it',
      () => agent(client(), 'find it'),
    );
    expect(resumed.value).toBe('Found it.');
    // One request more: the recorded answer and the recorded tool were served.
    expect(server.exchanges).toHaveLength(2);
    expect(server.rejected).toEqual([]);
  });
});

describe('against recorded responses', () => {
  it('charges a compaction at every iteration it reports, and a programmatic tool call as recorded', async () => {
    const recorded = recordedFetch('anthropic', ['programmatic_tool_call.json', 'compaction_usage.json']);
    const client = new Anthropic({ apiKey: 'sk-local', fetch: meterFetch([messagesWire], recorded.fetch) });
    const { result, value } = await observeLoop({ pricing, logger: false }, 'go', () => agent(client, 'go'));
    expect(result.outcome).toBe('end_of_turn');
    expect(typeof value).toBe('string');
    // The recordings' own figures: 1,520 / 96, then the compaction's iterations summed, 180,000 + 23,000 / 3,500 + 1,000.
    const first = JSON.parse(fixture('anthropic', 'programmatic_tool_call.json')) as {
      usage: { input_tokens: number; output_tokens: number };
    };
    const second = JSON.parse(fixture('anthropic', 'compaction_usage.json')) as {
      usage: { iterations: { input_tokens: number; output_tokens: number }[] };
    };
    const input = first.usage.input_tokens + second.usage.iterations.reduce((n, i) => n + i.input_tokens, 0);
    const output = first.usage.output_tokens + second.usage.iterations.reduce((n, i) => n + i.output_tokens, 0);
    expect(result.usage).toMatchObject({ llmCalls: 2, toolCalls: 1, inputTokens: input, outputTokens: output });
    expect(input).toBe(1_520 + 203_000);
    expect(result.usage.costUsd).toBeCloseTo((input * 3 + output * 15) / 1e6, 12);
    expect(recorded.requests).toHaveLength(2);
  });
});
