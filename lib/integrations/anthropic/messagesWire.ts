import type { Message, RawMessageStreamEvent } from '@anthropic-ai/sdk/resources/messages';
import type { LLMCallBound, LLMResponse, ToolCall, WireFormat } from 'agent-state-machine';
import { requestTokenBound } from '../../internal/requestTokenBound';
import { collectMessageStream } from './collectMessageStream';
import { mapAnthropicUsage } from './mapAnthropicUsage';
import { serverToolInputBound } from '../../internal/serverToolInputBound';
import { serverToolPlan } from './serverToolBound';

/**
 * The Messages API on the wire (`POST …/messages`), for `meterFetch`: a request's bound from
 * its body (`max_tokens`; the server tools it declares, by their `max_uses`, as the ready-made
 * loop bounds them), the answer read with every usage figure (`iterations`, server tool uses,
 * cache reads and writes), and a recorded answer served as a message.
 */
export const messagesWire: WireFormat = {
  name: 'Anthropic Messages',
  matches: (url) => url.pathname.endsWith('/messages'),
  bound(body) {
    const max = body.max_tokens;
    if (!(typeof max === 'number' && Number.isSafeInteger(max) && max >= 0))
      return `its max_tokens is ${JSON.stringify(max)}, not a non-negative integer (the Messages API requires one)`;
    const messages = (Array.isArray(body.messages) ? body.messages.length : 0) + (body.system === undefined ? 0 : 1);
    const tools = Array.isArray(body.tools) ? body.tools.length : 0;
    const inputTokens = requestTokenBound(body, messages, tools);
    const model = typeof body.model === 'string' ? { model: body.model } : {};
    const plan = serverToolPlan(body.tools, undefined);
    if (plan === undefined) return { inputTokens, maxOutputTokens: max, ...model };
    if ('unbounded' in plan)
      return `${plan.unbounded.why} (set ${plan.unbounded.remedy.replace('on the loop', 'on the request')})`;
    const bound: LLMCallBound = {
      inputTokens: serverToolInputBound(inputTokens, max, plan),
      maxOutputTokens: max,
      serverToolUses: plan.uses,
      ...model,
    };
    return bound;
  },
  read(json) {
    const message = json as Message;
    if (!Array.isArray(message.content)) throw new Error('the message has no content array');
    const text = message.content.flatMap((b) => (b.type === 'text' ? [b.text] : [])).join('');
    const toolCalls: ToolCall[] = message.content.flatMap((b) =>
      b.type === 'tool_use' ? [{ id: b.id, name: b.name, input: b.input }] : [],
    );
    const response: LLMResponse = {
      text,
      usage: mapAnthropicUsage(message.usage, message.content),
      model: message.model,
      finishReason: message.stop_reason ?? undefined,
    };
    if (toolCalls.length > 0) response.toolCalls = toolCalls;
    return response;
  },
  stream: {
    collect: async (events, watch) =>
      (await collectMessageStream(events as AsyncIterable<RawMessageStreamEvent>, () => undefined, watch)).message,
    serve(response, body) {
      const message = messagesWire.serve(response, body) as Message;
      const { content, usage, stop_reason, stop_sequence } = message;
      return [
        {
          type: 'message_start',
          message: { ...message, content: [], stop_reason: null, usage: { ...usage, output_tokens: 0 } },
        },
        ...content.flatMap((block, index) => [
          { type: 'content_block_start', index, content_block: block },
          { type: 'content_block_stop', index },
        ]),
        {
          type: 'message_delta',
          delta: { stop_reason, stop_sequence },
          usage: { output_tokens: usage?.output_tokens },
        },
        { type: 'message_stop' },
      ];
    },
  },
  serve(response, body) {
    const usage = response.usage;
    const calls = response.toolCalls ?? [];
    return {
      id: 'msg_journal',
      type: 'message',
      role: 'assistant',
      model: response.model ?? body.model ?? '',
      content: [
        ...(response.text === undefined || response.text === '' ? [] : [{ type: 'text', text: response.text }]),
        ...calls.map((c) => ({ type: 'tool_use', id: c.id, name: c.name, input: recordedInput(c.input) })),
      ],
      stop_reason: response.finishReason ?? (calls.length > 0 ? 'tool_use' : 'end_turn'),
      stop_sequence: null,
      ...(usage?.inputTokens !== undefined &&
        usage.outputTokens !== undefined && {
          usage: { input_tokens: usage.inputTokens, output_tokens: usage.outputTokens },
        }),
    };
  },
};

/** A tool call's input as a `tool_use` block carries it: an object (a JSON string is parsed). */
function recordedInput(input: unknown): unknown {
  if (typeof input !== 'string') return input ?? {};
  try {
    return JSON.parse(input) as unknown;
  } catch {
    return {};
  }
}
