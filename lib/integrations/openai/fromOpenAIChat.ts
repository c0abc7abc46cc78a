import type OpenAI from 'openai';
import type {
  ChatCompletion,
  ChatCompletionAssistantMessageParam,
  ChatCompletionCreateParamsNonStreaming,
  ChatCompletionMessageParam,
} from 'openai/resources/chat/completions';
import type { CompletionUsage } from 'openai/resources/completions';
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
  type Usage,
  watchOutputBound,
} from 'agent-state-machine';
import { checkSdkLoopOptions, runSdkTool, type SdkTool } from '../../internal/sdkTools';
import { collectChatStream } from './collectChatStream';
import { noMaxTokensMessage } from '../../internal/loweredMaxTokens';
import { markUnbounded } from '../../internal/unboundedLoop';
import { requestTokenBound } from '../../internal/requestTokenBound';
import { compactTurns } from '../../internal/dropOldestTurns';
import type { OpenAIChatLoop, OpenAIChatOptions } from './OpenAIChatOptions';
import { readChatMessage } from './readChatMessage';
import { chatRequestBody, configuredMax, maxTokensOf, type ChatRequestParts } from './chatRequestBody';

export type { OpenAIChatLoop, OpenAIChatOptions, OpenAIChatTool } from './OpenAIChatOptions';

type ChatClient = Pick<OpenAI, 'chat'>;

/**
 * An `AgentLoop` on the `openai` client's Chat Completions API (OpenAI or any compatible
 * endpoint: vLLM, Ollama, OpenRouter, Groq, …). Pass it to `AgentWithStateMachine` and the
 * integration is done: the SDK's own retries are off (the adapter's retry policy governs and
 * records every attempt), messages are committed only after the call that carries them
 * succeeded, tool arguments are parsed when the tool runs (bad JSON or an unknown tool
 * becomes an error result for the LLM), unanswered tool calls are settled after a cancel, a
 * budget stop or an error, and usage comes back with the model and the finish reason.
 */
export function fromOpenAIChat(client: ChatClient, options: OpenAIChatOptions): OpenAIChatLoop {
  const chat = (client as { chat?: { completions?: { create?: unknown } } } | null)?.chat;
  if (typeof chat?.completions?.create !== 'function')
    throw new InvalidArgumentError('client', 'an OpenAI client (with chat.completions.create)', client);
  const issue = checkSdkLoopOptions(options);
  if (issue !== undefined) throw new InvalidArgumentError(issue.argument, issue.expected, issue.value);

  // Read at every request, not copied: a record updated in place (as `mcpTools` does when the
  // server's tool list changes) offers the LLM its current tools.
  const tools: Readonly<Record<string, SdkTool>> = options.tools ?? {};
  const onText = typeof options.stream === 'object' ? options.stream.onText.bind(options.stream) : undefined;
  const stream = options.stream !== undefined && options.stream !== false;
  const messages: ChatCompletionMessageParam[] = [];
  if (options.system !== undefined) messages.push({ role: 'system', content: options.system });
  messages.push(...structuredClone(options.messages ?? []));
  let renamed = 0;
  const freshId = (): string => `call_asm${++renamed}`;

  const parts: ChatRequestParts = { options, tools, messages };
  const requestBody = (
    pending: ChatCompletionMessageParam[],
    ctx: OperationContext,
  ): ChatCompletionCreateParamsNonStreaming => chatRequestBody(parts, pending, ctx);
  const pendingFor = (call: LLMCall): ChatCompletionMessageParam[] =>
    call.operation === 'sendUserMessage'
      ? [{ role: 'user', content: call.message }]
      : resultMessages(call.results, call.messages);
  // A final call's instruction joins the conversation with the messages it is sent with.
  const withInstruction = (pending: ChatCompletionMessageParam[], ctx: OperationContext) =>
    ctx.wrapUp === undefined ? pending : [...pending, { role: 'user' as const, content: ctx.wrapUp }];

  async function call(sent: ChatCompletionMessageParam[], ctx: OperationContext): Promise<LLMResponse> {
    const pending = withInstruction(sent, ctx);
    const body = requestBody(pending, ctx);
    let completion: ChatCompletion;
    if (stream) {
      // A streamed request is cut at its max tokens, whether the server stops there or not.
      const watch = watchOutputBound(maxTokensOf(body), ctx.signal);
      completion = await collectChatStream(
        await client.chat.completions.create(
          { ...body, stream: true, stream_options: { ...(body.stream_options ?? {}), include_usage: true } },
          { signal: watch.signal, maxRetries: 0 },
        ),
        (delta) => onText?.(delta, { turn: ctx.turn, attempt: ctx.attempt ?? 1 }),
        watch,
      );
    } else completion = await client.chat.completions.create(body, { signal: ctx.signal, maxRetries: 0 });
    const choice = completion.choices?.[0];
    if (choice === undefined) {
      const answeredUsage = mapOpenAIUsage(completion.usage);
      // Answered, and billed at its usage when it reports one: never counted as unbilled.
      throw Object.assign(new Error(`the response to model ${options.model} has no choices`), {
        ...(answeredUsage && { answeredUsage, model: completion.model }),
      });
    }
    const message = choice.message;
    const { assistant, toolCalls } = readChatMessage(message, freshId);
    // Committed only now, after the call succeeded: a retry sends exactly what the failed attempt sent.
    messages.push(...pending, assistant);
    return {
      text: message.content ?? (typeof message.refusal === 'string' ? message.refusal : undefined),
      ...(toolCalls.length > 0 ? { toolCalls } : {}),
      usage: mapOpenAIUsage(completion.usage),
      model: completion.model,
      finishReason: choice.finish_reason ?? undefined,
    };
  }

  const loop: OpenAIChatLoop = {
    honours: { wrapUp: true, budgetNote: true },
    // Its compact drops the oldest turns: no LLM call.
    compactCalls: 'none',
    get messages() {
      return messages;
    },
    sendUserMessage: (message, ctx) => call([{ role: 'user', content: message }], ctx),
    sendToolResults: (results, extra, ctx) => call(resultMessages(results, extra), ctx),
    llmCallBound: (next: LLMCall, ctx: OperationContext): LLMCallBound => {
      const body = requestBody(withInstruction(pendingFor(next), ctx), ctx);
      const max = maxTokensOf(body);
      if (max === undefined) throw new Error(noMaxTokensMessage('fromOpenAIChat'));
      return {
        inputTokens: requestTokenBound(body, body.messages.length, body.tools?.length ?? 0),
        maxOutputTokens: max,
        model: options.model,
      };
    },
    // Resuming: the request's messages and the recorded answer join the conversation, as a call would add them.
    acceptRecorded: async (_operation, input, response): Promise<void> => {
      const pending: ChatCompletionMessageParam[] =
        input.kind === 'user_message'
          ? [{ role: 'user', content: input.message }]
          : resultMessages(input.results, input.messages);
      const assistant: ChatCompletionAssistantMessageParam = { role: 'assistant', content: response.text ?? null };
      const calls = response.toolCalls ?? [];
      if (calls.length > 0)
        assistant.tool_calls = calls.map((c) => ({
          id: c.id,
          type: 'function',
          function: { name: c.name, arguments: typeof c.input === 'string' ? c.input : JSON.stringify(c.input ?? {}) },
        }));
      messages.push(...pending, assistant);
    },
    runTool: async (toolCall: ToolCall, ctx: OperationContext): Promise<ToolResult> => ({
      callId: toolCall.id,
      ...(await runSdkTool(tools, toolCall, ctx)),
    }),
    settleToolCalls: async (results: ToolResult[], _info: SettleInfo): Promise<void> => {
      messages.push(...results.map(toolMessage));
    },
    // Used when the adapter's `compact` option is on: drops the oldest turns (a turn starts at a
    // user message; tool results never come after one inside a pairing), keeping the system
    // prompt and, while tool results are pending, the turn in progress.
    compact: async (info: CompactInfo): Promise<CompactResult> =>
      compactTurns(messages, (m) => m.role === 'user', info.operation),
  };
  // Marked when its requests ask for no max output tokens: a strict cap refuses it before anything runs.
  return markUnbounded(
    loop,
    configuredMax(options).value === undefined
      ? {
          setting: 'options.maxTokens',
          remedy: '`maxTokens` on the loop',
          why: "fromOpenAIChat sets no max output tokens, so a call's output (and its cost) has no bound",
        }
      : undefined,
  );
}

function resultMessages(results: readonly ToolResult[], extra: readonly string[]): ChatCompletionMessageParam[] {
  return [
    ...results.map(toolMessage),
    ...(extra.length > 0 ? [{ role: 'user' as const, content: extra.join('\n\n') }] : []),
  ];
}

function toolMessage(result: ToolResult): ChatCompletionMessageParam {
  return { role: 'tool', tool_call_id: result.callId, content: result.output };
}

/**
 * Every figure a Chat Completions response reports, in the library's terms (`inputTokens`
 * includes the cached ones, as `prompt_tokens` does), with the cost a gateway such as
 * OpenRouter reports in `usage.cost`.
 */
export function mapOpenAIUsage(usage: CompletionUsage | null | undefined): Usage | undefined {
  if (usage === undefined || usage === null) return undefined;
  const details = usage.prompt_tokens_details as { cached_tokens?: number; cache_write_tokens?: number } | undefined;
  // OpenRouter and some gateways report the price they charged.
  const cost = (usage as { cost?: unknown }).cost;
  return {
    inputTokens: usage.prompt_tokens,
    outputTokens: usage.completion_tokens,
    cachedInputTokens: details?.cached_tokens,
    cacheWriteTokens: details?.cache_write_tokens,
    reasoningTokens: usage.completion_tokens_details?.reasoning_tokens,
    ...(typeof cost === 'number' && Number.isFinite(cost) ? { costUsd: cost } : {}),
  };
}
