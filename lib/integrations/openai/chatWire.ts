import type { ChatCompletion, ChatCompletionChunk } from 'openai/resources/chat/completions';
import type { LLMResponse, WireFormat } from 'agent-state-machine';
import { requestTokenBound } from '../../internal/requestTokenBound';
import { mapOpenAIUsage } from './fromOpenAIChat';
import { ChatStreamFold } from './ChatStreamFold';
import { collectChatStream } from './collectChatStream';
import { readChatMessage } from './readChatMessage';
import { wireMaxTokens } from './wireMaxTokens';

/**
 * The Chat Completions API on the wire (`POST …/chat/completions`), for `meterFetch`: a
 * request's bound from its body (the serialized request bounds its input tokens;
 * `max_completion_tokens` or `max_tokens`, times `n`, its output), the answer read as the ready-made
 * loop reads it, and a recorded answer served as a completion.
 */
export const chatWire: WireFormat = {
  name: 'OpenAI Chat Completions',
  matches: (url) => url.pathname.endsWith('/chat/completions'),
  bound(body) {
    const max = wireMaxTokens(body, ['max_completion_tokens', 'max_tokens']);
    if (typeof max === 'string') return max;
    const n = body.n === undefined || body.n === null ? 1 : body.n;
    if (!(typeof n === 'number' && Number.isSafeInteger(n) && n >= 1))
      return `its n is ${JSON.stringify(n)}, not a positive integer`;
    const messages = Array.isArray(body.messages) ? body.messages.length : 0;
    const tools = Array.isArray(body.tools) ? body.tools.length : 0;
    return {
      inputTokens: requestTokenBound(body, messages, tools),
      // Each choice is output billed.
      maxOutputTokens: max * n,
      ...(typeof body.model === 'string' ? { model: body.model } : {}),
    };
  },
  read(json) {
    const completion = json as ChatCompletion;
    const choice = Array.isArray(completion.choices) ? completion.choices[0] : undefined;
    if (choice?.message === undefined) throw new Error('the completion has no choices[0].message');
    let fresh = 0;
    const { toolCalls } = readChatMessage(choice.message, () => `call_wire_${++fresh}`);
    const refusal = typeof choice.message.refusal === 'string' ? choice.message.refusal : undefined;
    const response: LLMResponse = {
      text: choice.message.content ?? refusal,
      usage: mapOpenAIUsage(completion.usage),
      model: completion.model,
      finishReason: choice.finish_reason ?? undefined,
    };
    if (toolCalls.length > 0) response.toolCalls = toolCalls;
    return response;
  },
  stream: {
    collect: (events, watch) => collectChatStream(events as AsyncIterable<ChatCompletionChunk>, () => undefined, watch),
    fold: (watch) => new ChatStreamFold(watch),
    serve(response, body) {
      const completion = chatWire.serve(response, body) as ChatCompletion;
      const choice = completion.choices[0]!;
      const { role, content, tool_calls } = choice.message;
      const chunk = (delta: object, finish: string | null, more: object = {}) => ({
        id: completion.id,
        object: 'chat.completion.chunk',
        created: 0,
        model: completion.model,
        choices: [{ index: 0, delta, finish_reason: finish, logprobs: null }],
        ...more,
      });
      const calls = (tool_calls ?? []).map((c, index) => ({ index, ...c }));
      const wantsUsage = (body.stream_options as { include_usage?: unknown } | undefined)?.include_usage === true;
      return [
        chunk({ role, content: content ?? '', ...(calls.length > 0 && { tool_calls: calls }) }, null),
        chunk({}, choice.finish_reason),
        ...(wantsUsage && completion.usage !== undefined
          ? [{ ...chunk({}, null), choices: [], usage: completion.usage }]
          : []),
        '[DONE]',
      ];
    },
  },
  serve(response, body) {
    const calls = response.toolCalls ?? [];
    const usage = response.usage;
    return {
      id: 'chatcmpl-journal',
      object: 'chat.completion',
      created: 0,
      model: response.model ?? body.model ?? '',
      choices: [
        {
          index: 0,
          message: {
            role: 'assistant',
            content: response.text ?? null,
            refusal: null,
            ...(calls.length > 0 && {
              tool_calls: calls.map((c) => ({
                id: c.id,
                type: 'function',
                function: {
                  name: c.name,
                  arguments: typeof c.input === 'string' ? c.input : JSON.stringify(c.input ?? {}),
                },
              })),
            }),
          },
          finish_reason: response.finishReason ?? (calls.length > 0 ? 'tool_calls' : 'stop'),
          logprobs: null,
        },
      ],
      ...(usage?.inputTokens !== undefined &&
        usage.outputTokens !== undefined && {
          usage: {
            prompt_tokens: usage.inputTokens,
            completion_tokens: usage.outputTokens,
            total_tokens: usage.inputTokens + usage.outputTokens,
          },
        }),
    };
  },
};
