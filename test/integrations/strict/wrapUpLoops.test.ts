import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { DEFAULT_TABLE, extendTable, WRAP_UP_EXTENSION, type AgentLoop, type Pricing } from 'agent-state-machine';
import { DEFAULT_WRAP_UP_INSTRUCTION } from '../../../lib/agent/BudgetEndings';
import { fromAnthropic } from '../../../lib/integrations/anthropic';
import { fromOpenAIChat, fromOpenAIResponses } from '../../../lib/integrations/openai';
import { startAnthropicMessagesServer } from '../../../examples/servers/anthropicMessagesServer';
import { startOpenAIChatServer } from '../../../examples/servers/openaiChatServer';
import { startOpenAIResponsesServer } from '../../../examples/servers/openaiResponsesServer';
import { agentOf, readFile } from '../../helpers/sdkLoopTest';

// The real SDK clients against the strict local servers. While a request offers tools, the
// model asks for another tool call with every output token its request allows (the worst
// case), so the turn goes on until the cap: then the final call (no tool may be used, the
// instruction last) gets the answer. The cap is never passed and the server rejects nothing.

// $1 per million input tokens, $4 per million output tokens.
const pricing: Pricing = (u) => (u.inputTokens ?? 0) * 1e-6 + (u.outputTokens ?? 0) * 4e-6;
const CAP = 0.05;
const MAX = 2000;
const TABLE = extendTable(DEFAULT_TABLE, WRAP_UP_EXTENSION);
const ANSWER = 'a.txt says hello, as far as I got';
const billedInput = (body: unknown): number => Math.ceil(JSON.stringify(body).length / 4);

type Body = { tools?: unknown; tool_choice?: unknown };

interface Served {
  loop: AgentLoop;
  /** Each request: whether it let the model use a tool, and the text of its last user message. */
  requests: () => Array<{ tools: boolean; last: string }>;
  rejected: () => unknown[];
  close: () => Promise<void>;
}

const text = (content: unknown): string =>
  typeof content === 'string'
    ? content
    : (content as Array<{ type: string; text?: string }>)
        .filter((b) => b.type === 'text' || b.type === 'input_text')
        .map((b) => b.text)
        .join('\n');

const loops: Record<string, () => Promise<Served>> = {
  'OpenAI Chat': async () => {
    const mayUseTools = (body: Body): boolean => body.tools !== undefined && body.tool_choice !== 'none';
    const s = await startOpenAIChatServer({
      maxOutputTokens: MAX,
      respond: (body) =>
        mayUseTools(body)
          ? {
              toolCalls: [{ name: 'read_file', arguments: '{"path":"a.txt"}' }],
              usage: { prompt_tokens: billedInput(body), completion_tokens: body.max_completion_tokens },
            }
          : { content: ANSWER, usage: { prompt_tokens: billedInput(body), completion_tokens: 20 } },
    });
    const client = new OpenAI({ apiKey: 'sk-local', baseURL: s.baseURL });
    return {
      loop: fromOpenAIChat(client, { model: 'gpt-4o-mini', tools: { read_file: readFile }, maxTokens: MAX }),
      requests: () =>
        s.exchanges.map((e) => ({
          tools: mayUseTools(e.body),
          last: text(e.body.messages.filter((m: { role: string }) => m.role === 'user').at(-1).content),
        })),
      rejected: () => s.rejected,
      close: () => s.close(),
    };
  },
  'OpenAI Responses': async () => {
    const mayUseTools = (body: Body): boolean => body.tools !== undefined && body.tool_choice !== 'none';
    const s = await startOpenAIResponsesServer({
      maxOutputTokens: MAX,
      respond: (body: Body & { max_output_tokens: number }) =>
        mayUseTools(body)
          ? {
              toolCalls: [{ name: 'read_file', arguments: '{"path":"a.txt"}' }],
              usage: { input_tokens: billedInput(body), output_tokens: body.max_output_tokens },
            }
          : { text: ANSWER, usage: { input_tokens: billedInput(body), output_tokens: 20 } },
    });
    const client = new OpenAI({ apiKey: 'sk-local', baseURL: s.baseURL });
    return {
      loop: fromOpenAIResponses(client, { model: 'gpt-4.1-mini', tools: { read_file: readFile }, maxTokens: MAX }),
      requests: () =>
        s.exchanges.map((e) => {
          const body = e.body as Body & { input: unknown };
          const users = (body.input as Array<{ role?: string; content?: unknown }>).filter((i) => i.role === 'user');
          return { tools: mayUseTools(body), last: text(users.at(-1)!.content) };
        }),
      rejected: () => s.rejected,
      close: () => s.close(),
    };
  },
  Anthropic: async () => {
    const mayUseTools = (body: Body): boolean =>
      body.tools !== undefined && (body.tool_choice as { type?: string } | undefined)?.type !== 'none';
    const s = await startAnthropicMessagesServer({
      maxOutputTokens: MAX,
      respond: (body) =>
        mayUseTools(body)
          ? {
              toolUses: [{ name: 'read_file', input: { path: 'a.txt' } }],
              usage: { input_tokens: billedInput(body), output_tokens: body.max_tokens },
            }
          : { text: ANSWER, usage: { input_tokens: billedInput(body), output_tokens: 20 } },
    });
    const client = new Anthropic({ apiKey: 'sk-ant-local', baseURL: s.baseURL });
    return {
      loop: fromAnthropic(client, { model: 'claude-x', tools: { read_file: readFile }, maxTokens: MAX }),
      requests: () =>
        s.exchanges.map((e) => {
          const content = e.body.messages.at(-1).content;
          const blocks = typeof content === 'string' ? [{ type: 'text', text: content }] : content;
          const texts = (blocks as Array<{ type: string; text?: string }>).filter((b) => b.type === 'text');
          return { tools: mayUseTools(e.body), last: texts.at(-1)?.text ?? '' };
        }),
      rejected: () => s.rejected,
      close: () => s.close(),
    };
  },
};

describe.each(Object.keys(loops))('%s with budget.wrapUp', (name) => {
  let served: Served | undefined;
  afterEach(async () => served?.close());

  it.each([true, false])(
    'ends with the answer of a final call with no tools within the cap (strict: %s)',
    async (strict) => {
      served = await loops[name]!();
      const agent = agentOf(served.loop, {
        pricing,
        table: TABLE,
        budget: { maxCostUsd: CAP, strict, wrapUp: true },
      });
      const result = await agent.runTurn('Read a.txt again and again');
      expect(served.rejected()).toEqual([]);
      expect(result.outcome).toBe('wrapped_up');
      expect(result.text).toBe(ANSWER);
      expect(result.usage.costUsd).toBeLessThanOrEqual(CAP);
      const requests = served.requests();
      expect(requests.length).toBeGreaterThan(2);
      // Every request but the last let the model use tools; the last did not, and asked for the answer.
      expect(requests.slice(0, -1).every((r) => r.tools)).toBe(true);
      expect(requests.at(-1)).toEqual({ tools: false, last: DEFAULT_WRAP_UP_INSTRUCTION });
    },
  );

  it('with budget.visible, each request carries a note of what is left, sent with it alone', async () => {
    served = await loops[name]!();
    const agent = agentOf(served.loop, {
      pricing,
      table: TABLE,
      budget: { maxCostUsd: CAP, strict: true, wrapUp: true, visible: true },
    });
    const result = await agent.runTurn('Read a.txt again and again');
    expect(served.rejected()).toEqual([]);
    expect(result.outcome).toBe('wrapped_up');
    const lasts = served.requests().map((r) => r.last);
    expect(lasts[0]).toBe('Budget left: $0.0500 of $0.0500 cost.');
    expect(lasts.every((l) => l.startsWith('Budget left: $'))).toBe(true);
    // Dollars left fall from one request to the next.
    const left = lasts.map((l) => Number(/\$([0-9.]+) of/.exec(l)![1]));
    for (let i = 1; i < left.length; i++) expect(left[i]).toBeLessThan(left[i - 1]!);
  });
});
