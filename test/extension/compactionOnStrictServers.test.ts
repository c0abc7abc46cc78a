import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import {
  AgentWithStateMachine,
  COMPACTION_EXTENSION,
  DEFAULT_TABLE,
  extendTable,
  type TransitionRecord,
} from 'agent-state-machine';
import { fromAnthropic } from '../../lib/integrations/anthropic';
import { fromOpenAIChat } from '../../lib/integrations/openai';
import { checkChatRequest, startOpenAIChatServer, type ChatAction } from '../../examples/servers/openaiChatServer';
import {
  checkMessagesRequest,
  startAnthropicMessagesServer,
  type MessagesAction,
} from '../../examples/servers/anthropicMessagesServer';
import { readFile, recordingSleep } from '../helpers/sdkLoopTest';

// The real SDK clients against the strict servers, which reject a request over the model's
// context with the real APIs' 400 bodies. The adapter compacts (the loops' default: drop the
// oldest turns, tool calls kept with their results) and the same call goes through.

const TABLE = extendTable(DEFAULT_TABLE, COMPACTION_EXTENSION);
const CONTEXT_TOKENS = 600;
const LONG = (c: string, n: number): string => c.repeat(n);

function adapter(loop: ConstructorParameters<typeof AgentWithStateMachine>[0]) {
  const records: TransitionRecord<string>[] = [];
  const agent = new AgentWithStateMachine(loop, {
    table: TABLE,
    compact: true,
    logger: false,
    sleep: recordingSleep(),
    sink: { write: (r) => void records.push(r) },
  });
  return { agent, records };
}

/** Three turns: a tool turn and a text turn with long answers, then a long question that overflows. */
async function threeTurns(agent: AgentWithStateMachine): Promise<string[]> {
  const outcomes: string[] = [];
  for (const input of ['What is in a.txt?', 'And then?', LONG('q', 1500)])
    outcomes.push((await agent.runTurn(input)).outcome);
  return outcomes;
}

describe('compaction on the strict servers, with the real SDK clients', () => {
  it('OpenAI Chat Completions: context_length_exceeded → Compacting → the retried request is valid and answered', async () => {
    const replies: ChatAction[] = [
      { toolCalls: [{ id: 'call_1', name: 'read_file', arguments: '{"path":"a.txt"}' }] },
      { content: LONG('a', 300) },
      { content: LONG('b', 300) },
      { content: 'short answer' },
    ];
    const server = await startOpenAIChatServer({
      contextTokens: CONTEXT_TOKENS,
      respond: (_body, i) => replies[i] ?? { error: { status: 500, message: `no reply ${i}` } },
    });
    try {
      const loop = fromOpenAIChat(new OpenAI({ apiKey: 'sk-local', baseURL: server.baseURL }), {
        model: 'gpt-4o-mini',
        tools: { read_file: readFile },
        system: 'You are terse.',
      });
      const { agent, records } = adapter(loop);
      expect(await threeTurns(agent)).toEqual(['end_of_turn', 'end_of_turn', 'end_of_turn']);
      // Exactly one rejection, the overflow, with the real API's code.
      expect(server.rejected).toHaveLength(1);
      expect(server.rejected[0]!.rejected!.message).toMatch(/maximum context length is 600 tokens/);
      const retried = server.exchanges.at(-1)!;
      expect(retried.rejected).toBeUndefined();
      expect(checkChatRequest(retried.body)).toBeUndefined();
      // The oldest turn (with its tool call and result) went as a whole; the system prompt stayed.
      const roles = (retried.body.messages as Array<{ role: string }>).map((m) => m.role);
      expect(roles).toEqual(['system', 'user', 'assistant', 'user']);
      expect(records.map((r) => r.to)).toContain('Compacting');
      expect(records.filter((r) => r.forced)).toEqual([]);
    } finally {
      await server.close();
    }
  });

  it('Anthropic Messages: prompt is too long → Compacting → the retried request is valid and answered', async () => {
    const replies: MessagesAction[] = [
      { toolUses: [{ id: 'toolu_1', name: 'read_file', input: { path: 'a.txt' } }] },
      { text: LONG('a', 300) },
      { text: LONG('b', 300) },
      { text: 'short answer' },
    ];
    const server = await startAnthropicMessagesServer({
      contextTokens: CONTEXT_TOKENS,
      respond: (_body, i) => replies[i] ?? { error: { status: 500, type: 'api_error', message: `no reply ${i}` } },
    });
    try {
      const loop = fromAnthropic(new Anthropic({ apiKey: 'sk-ant-local', baseURL: server.baseURL }), {
        model: 'claude-sonnet-4-5',
        tools: { read_file: readFile },
        system: 'You are terse.',
      });
      const { agent, records } = adapter(loop);
      expect(await threeTurns(agent)).toEqual(['end_of_turn', 'end_of_turn', 'end_of_turn']);
      expect(server.rejected).toHaveLength(1);
      expect(server.rejected[0]!.rejected!.message).toMatch(/^prompt is too long: \d+ tokens > 600 maximum$/);
      const retried = server.exchanges.at(-1)!;
      expect(retried.rejected).toBeUndefined();
      expect(checkMessagesRequest(retried.body)).toBeUndefined();
      const roles = (retried.body.messages as Array<{ role: string }>).map((m) => m.role);
      expect(roles).toEqual(['user', 'assistant', 'user']);
      expect(records.map((r) => r.to)).toContain('Compacting');
    } finally {
      await server.close();
    }
  });
});
