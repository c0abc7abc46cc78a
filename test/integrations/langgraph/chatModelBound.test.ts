import { AIMessage, HumanMessage, SystemMessage, ToolMessage } from '@langchain/core/messages';
import { requestTokenBound } from '../../../lib/internal/requestTokenBound';
import { chatModelBound } from '../../../lib/integrations/langgraph/chatModelBound';

describe('chatModelBound', () => {
  const messages = [
    [
      new SystemMessage('Be brief.'),
      new HumanMessage('hi'),
      new AIMessage({ content: '', tool_calls: [{ id: 'c1', name: 'echo', args: { text: 'x' }, type: 'tool_call' }] }),
    ],
  ];
  const tools = [{ type: 'function', function: { name: 'echo', parameters: { type: 'object' } } }];

  it('bounds the messages (tool calls included) and the bound tools, with the max tokens the model states', () => {
    const bound = chatModelBound(messages, { model: 'gpt-x', max_tokens: 64, tools }, undefined, 'gpt-x');
    // Every byte a provider's request carries of them: contents, tool calls, the tools.
    const sent = JSON.stringify({
      messages: messages.flat().map((m) => ({ content: m.content, tool_calls: (m as AIMessage).tool_calls })),
      tools,
    });
    expect(bound).toMatchObject({ maxOutputTokens: 64, model: 'gpt-x' });
    expect((bound as { inputTokens: number }).inputTokens).toBeGreaterThanOrEqual(
      requestTokenBound(JSON.parse(sent) as unknown, 3, 1),
    );
  });

  it('counts what a request carries of a message (content, tool calls, tool call id, additional kwargs), not its id or response metadata', () => {
    const inputOf = (extra: Record<string, unknown>): number =>
      (
        chatModelBound([[new AIMessage({ content: 'x', ...extra })]], { max_tokens: 1 }, undefined, undefined) as {
          inputTokens: number;
        }
      ).inputTokens;
    const base = inputOf({});
    const long = 'y'.repeat(1000);
    expect(inputOf({ id: long, response_metadata: { long } })).toBe(base);
    expect(inputOf({ content: long })).toBeGreaterThanOrEqual(base + 999);
    expect(inputOf({ additional_kwargs: { function_call: { name: 'f', arguments: long } } })).toBeGreaterThanOrEqual(
      base + 1000,
    );
    expect(inputOf({ tool_calls: [{ id: 'c', name: 'f', args: { long }, type: 'tool_call' }] })).toBeGreaterThanOrEqual(
      base + 1000,
    );
    const tool = chatModelBound(
      [[new ToolMessage({ content: long, tool_call_id: 'call_' + long })]],
      { max_tokens: 1 },
      undefined,
      undefined,
    );
    expect((tool as { inputTokens: number }).inputTokens).toBeGreaterThanOrEqual(2000);
  });

  it('reads max_completion_tokens, then the ls_max_tokens metadata; says why when no max is stated', () => {
    expect(chatModelBound(messages, { max_completion_tokens: 9 }, undefined, undefined)).toMatchObject({
      maxOutputTokens: 9,
    });
    expect(chatModelBound(messages, {}, { ls_max_tokens: 12 }, undefined)).toMatchObject({ maxOutputTokens: 12 });
    expect(chatModelBound(messages, {}, undefined, undefined)).toMatch(/states no max output tokens/);
    expect(chatModelBound(messages, { max_tokens: -1 }, undefined, undefined)).toMatch(/not a non-negative integer/);
  });
});
