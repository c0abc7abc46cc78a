import type Anthropic from '@anthropic-ai/sdk';
import type {
  ContentBlock,
  ContentBlockParam,
  Message,
  MessageParam,
  ToolResultBlockParam,
} from '@anthropic-ai/sdk/resources/messages';
import {
  InvalidArgumentError,
  type LLMCall,
  type LLMCallBound,
  type CompactInfo,
  type CompactResult,
  type LLMResponse,
  type OperationContext,
  type SettleInfo,
  type ToolCall,
  type ToolResult,
  watchOutputBound,
} from 'agent-state-machine';
import { checkSdkLoopOptions, runSdkTool, type SdkTool } from '../../internal/sdkTools';
import { uniqueCallIds } from '../../internal/uniqueCallIds';
import { requestTokenBound } from '../../internal/requestTokenBound';
import { compactTurns } from '../../internal/dropOldestTurns';
import type { AnthropicLoop, AnthropicOptions } from './AnthropicOptions';
import { anthropicRequest, blocks, type AnthropicRequest, type AnthropicRequestParts } from './anthropicRequest';
import { collectMessageStream } from './collectMessageStream';
import { mapAnthropicUsage } from './mapAnthropicUsage';
import { serverToolInputBound } from '../../internal/serverToolInputBound';
import { serverToolPlan } from './serverToolBound';
import { markUnbounded } from '../../internal/unboundedLoop';

export type { AnthropicLoop, AnthropicOptions, AnthropicTool } from './AnthropicOptions';

type MessagesClient = Pick<Anthropic, 'messages'>;

/**
 * An `AgentLoop` on `@anthropic-ai/sdk`'s Messages API. Pass it to `AgentWithStateMachine` and
 * the integration is done: the SDK's own retries are off (the adapter's retry policy governs,
 * and honours `retry-after` on 429 and 529), messages are committed only after the call that
 * carries them succeeded, tool input is checked when the tool runs (input streamed as bad JSON
 * or an unknown tool becomes an error `tool_result` for the LLM), unanswered `tool_use` blocks
 * are answered after a cancel, a budget stop or an error, and usage comes back with the cache
 * figures, the model and the stop reason.
 */
export function fromAnthropic(client: MessagesClient, options: AnthropicOptions): AnthropicLoop {
  const create = (client as { messages?: { create?: unknown } } | null)?.messages?.create;
  if (typeof create !== 'function')
    throw new InvalidArgumentError('client', 'an Anthropic client (with messages.create)', client);
  const issue = checkSdkLoopOptions(options);
  if (issue !== undefined) throw new InvalidArgumentError(issue.argument, issue.expected, issue.value);
  const perUse = options.serverToolResultTokens;
  if (perUse !== undefined && !(Number.isSafeInteger(perUse) && perUse > 0))
    throw new InvalidArgumentError('options.serverToolResultTokens', 'a positive integer of tokens', perUse);

  // Read at every request, not copied: a record updated in place (as `mcpTools` does when the
  // server's tool list changes) offers the LLM its current tools.
  const tools: Readonly<Record<string, SdkTool>> = options.tools ?? {};
  const onText = typeof options.stream === 'object' ? options.stream.onText.bind(options.stream) : undefined;
  const stream = options.stream !== undefined && options.stream !== false;
  const messages: MessageParam[] = structuredClone(options.messages ?? []);
  let renamed = 0;
  const freshId = (): string => `toolu_asm${++renamed}`;

  const parts: AnthropicRequestParts = { options, tools, messages };
  const requestOf = (next: MessageParam, ctx: OperationContext, merge: boolean): AnthropicRequest =>
    anthropicRequest(parts, next, ctx, merge);

  /** `merge`: the pending user message joins the last committed one, when that is a user message (settled tool results). */
  async function call(next: MessageParam, ctx: OperationContext, merge = false): Promise<LLMResponse> {
    const { body, pending, joined } = requestOf(next, ctx, merge);
    let badInput = new Map<string, string>();
    let message: Message;
    if (stream) {
      // A streamed request is cut at its max tokens, whether the server stops there or not.
      const watch = watchOutputBound(body.max_tokens, ctx.signal);
      const events = await client.messages.create({ ...body, stream: true }, { signal: watch.signal, maxRetries: 0 });
      ({ message, badInput } = await collectMessageStream(
        events,
        (delta) => onText?.(delta, { turn: ctx.turn, attempt: ctx.attempt ?? 1 }),
        watch,
      ));
    } else {
      message = await client.messages.create(body, { signal: ctx.signal, maxRetries: 0 });
    }
    // Empty or repeated tool_use ids get fresh ones, in the conversation kept and in the calls returned alike.
    const uses = message.content.flatMap((b) => (b.type === 'tool_use' ? [b] : []));
    const ids = uniqueCallIds(
      uses.map((b) => b.id ?? ''),
      freshId,
    );
    const idOf = new Map(uses.map((b, i) => [b, ids[i]!]));
    // Empty text blocks are dropped: the API rejects them when the conversation is sent back.
    const content = message.content
      .filter((b) => !(b.type === 'text' && b.text === ''))
      .map((b) => (b.type === 'tool_use' ? { ...toParam(b), id: idOf.get(b)! } : toParam(b)));
    // Committed only now, after the call succeeded. An empty answer is not kept: the API
    // rejects an empty assistant message in the middle of a conversation.
    if (joined) messages.pop();
    messages.push(pending);
    if (content.length > 0) messages.push({ role: 'assistant', content });
    const text = message.content.flatMap((b) => (b.type === 'text' ? [b.text] : [])).join('');
    const toolCalls: ToolCall[] = uses.map((b, i) => ({
      id: ids[i]!,
      name: b.name,
      input: badInput.get(b.id) ?? b.input,
    }));
    return {
      ...(text !== '' || toolCalls.length === 0 ? { text } : {}),
      ...(toolCalls.length > 0 ? { toolCalls } : {}),
      usage: mapAnthropicUsage(message.usage, message.content),
      model: message.model,
      finishReason: message.stop_reason ?? undefined,
    };
  }

  const loop: AnthropicLoop = {
    honours: { wrapUp: true, budgetNote: true },
    // Its compact drops the oldest turns: no LLM call.
    compactCalls: 'none',
    get messages() {
      return messages;
    },
    // After settled tool results the conversation ends with a user message: the new one joins
    // it, so user and assistant keep alternating (as every Messages endpoint accepts).
    sendUserMessage: (message, ctx) => call({ role: 'user', content: message }, ctx, true),
    sendToolResults: (results, extra, ctx) => call(resultMessage(results, extra), ctx),
    llmCallBound: (next: LLMCall, ctx: OperationContext): LLMCallBound => {
      const { body } = requestOf(
        next.operation === 'sendUserMessage'
          ? { role: 'user', content: next.message }
          : resultMessage(next.results, next.messages),
        ctx,
        next.operation === 'sendUserMessage',
      );
      const inputTokens = requestTokenBound(body, body.messages.length + 1, body.tools?.length ?? 0);
      // Server tools in `request.tools`: their uses' fees, and the input their results add.
      const plan = serverToolPlan(options.request?.tools, options.serverToolResultTokens);
      if (plan !== undefined && 'unbounded' in plan)
        throw new Error(
          `fromAnthropic cannot bound this request: ${plan.unbounded.why} (set ${plan.unbounded.remedy})`,
        );
      if (plan === undefined) return { inputTokens, maxOutputTokens: body.max_tokens, model: options.model };
      return {
        inputTokens: serverToolInputBound(inputTokens, body.max_tokens, plan),
        maxOutputTokens: body.max_tokens,
        model: options.model,
        serverToolUses: plan.uses,
      };
    },
    // Resuming: the request's message and the recorded answer join the conversation, as a call would add them.
    acceptRecorded: async (_operation, input, response, ctx): Promise<void> => {
      const next: MessageParam =
        input.kind === 'user_message'
          ? { role: 'user', content: input.message }
          : resultMessage(input.results, input.messages);
      const { pending, joined } = requestOf(next, ctx, input.kind === 'user_message');
      const content: ContentBlockParam[] = [];
      if (response.text !== undefined && response.text !== '') content.push({ type: 'text', text: response.text });
      for (const c of response.toolCalls ?? [])
        content.push({ type: 'tool_use', id: c.id, name: c.name, input: recordedInput(c.input) });
      if (joined) messages.pop();
      messages.push(pending);
      if (content.length > 0) messages.push({ role: 'assistant', content });
    },
    runTool: async (toolCall: ToolCall, ctx: OperationContext): Promise<ToolResult> => ({
      callId: toolCall.id,
      ...(await runSdkTool(tools, toolCall, ctx)),
    }),
    settleToolCalls: async (results: ToolResult[], _info: SettleInfo): Promise<void> => {
      if (results.length > 0) messages.push({ role: 'user', content: results.map(toolResultBlock) });
    },
    // Used when the adapter's `compact` option is on: drops the oldest turns. A turn starts at a
    // user message with no tool_result block (one that answers tool_use blocks belongs to the
    // turn before it), so what is left starts with a user message and no tool_result is orphaned.
    compact: async (info: CompactInfo): Promise<CompactResult> =>
      compactTurns(
        messages,
        (m) => m.role === 'user' && !blocks(m.content).some((b) => b.type === 'tool_result'),
        info.operation,
      ),
  };
  const plan = serverToolPlan(options.request?.tools, options.serverToolResultTokens);
  // Marked when its server tools leave its requests without a bound: a strict cap refuses it before anything runs.
  return markUnbounded(loop, plan !== undefined && 'unbounded' in plan ? plan.unbounded : undefined);
}

/** A recorded tool input as the API takes it back: an object (input that did not parse was kept as its text). */
function recordedInput(input: unknown): Record<string, unknown> {
  if (typeof input === 'object' && input !== null && !Array.isArray(input)) return input as Record<string, unknown>;
  if (typeof input === 'string') {
    try {
      const parsed: unknown = JSON.parse(input);
      if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed))
        return parsed as Record<string, unknown>;
    } catch {
      // not JSON: sent back empty
    }
  }
  return {};
}

function resultMessage(results: readonly ToolResult[], extra: readonly string[]): MessageParam {
  return {
    role: 'user',
    content: [...results.map(toolResultBlock), ...extra.map((text): ContentBlockParam => ({ type: 'text', text }))],
  };
}

function toolResultBlock(result: ToolResult): ToolResultBlockParam {
  return {
    type: 'tool_result',
    tool_use_id: result.callId,
    content: result.output,
    ...(result.isError ? { is_error: true } : {}),
  };
}

/** A response block as it goes back in the conversation: the fields the API accepts, thinking signatures kept. */
function toParam(block: ContentBlock): ContentBlockParam {
  switch (block.type) {
    case 'text':
      return { type: 'text', text: block.text };
    case 'tool_use':
      return { type: 'tool_use', id: block.id, name: block.name, input: block.input };
    case 'thinking':
      return { type: 'thinking', thinking: block.thinking, signature: block.signature };
    case 'redacted_thinking':
      return { type: 'redacted_thinking', data: block.data };
    default:
      return block as unknown as ContentBlockParam;
  }
}
