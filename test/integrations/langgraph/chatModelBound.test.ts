import { AIMessage, HumanMessage, SystemMessage } from '@langchain/core/messages';
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
    const body = {
      messages: messages.flat(),
      tools,
      functions: undefined,
      tool_choice: undefined,
      response_format: undefined,
    };
    expect(bound).toEqual({ inputTokens: requestTokenBound(body, 3, 1), maxOutputTokens: 64, model: 'gpt-x' });
    expect(JSON.stringify(body)).toContain('Be brief.');
    expect(JSON.stringify(body)).toContain('"args":{"text":"x"}');
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
