import type {
  ChatCompletionCreateParamsNonStreaming,
  ChatCompletionMessageParam,
  ChatCompletionTool,
} from 'openai/resources/chat/completions';
import type { OperationContext } from 'agent-state-machine';
import { beforeLastRound } from '../../internal/beforeLastRound';
import { loweredMaxTokens } from '../../internal/loweredMaxTokens';
import { besideGivenTools, toolDefinitions, type SdkTool } from '../../internal/sdkTools';
import type { OpenAIChatOptions } from './OpenAIChatOptions';

/** What every request of a Chat Completions loop is made from, fixed when the loop is made. */
export interface ChatRequestParts {
  options: OpenAIChatOptions;
  /** The loop's tools, read at every request (a record updated in place offers its current tools). */
  tools: Readonly<Record<string, SdkTool>>;
  /** The conversation so far, as the loop keeps it. */
  messages: ChatCompletionMessageParam[];
}

/**
 * The body of one request: the conversation and `pending` (the messages this call adds), the
 * budget note, the loop's tools beside those of `request`, and the max output tokens lowered
 * to what the budget leaves (`ctx.maxOutputTokens`).
 */
export function chatRequestBody(
  parts: ChatRequestParts,
  pending: ChatCompletionMessageParam[],
  ctx: OperationContext,
): ChatCompletionCreateParamsNonStreaming {
  const { options, messages } = parts;
  // A final call (`ctx.wrapUp`) offers no tools at all, neither the loop's nor `request`'s.
  const toolParams = ctx.wrapUp === undefined ? chatToolParams(parts.tools) : [];
  const max = configuredMax(options);
  const limit = loweredMaxTokens(max.value, ctx.maxOutputTokens);
  const request: Record<string, unknown> = { ...options.request };
  if (ctx.wrapUp !== undefined) for (const key of TOOL_FIELDS) delete request[key];
  return {
    ...request,
    model: options.model,
    // The budget note rides on this request alone.
    messages: [
      ...sentMessages(messages, pending, ctx),
      ...(ctx.budgetNote === undefined ? [] : [{ role: 'user' as const, content: ctx.budgetNote }]),
    ],
    // Tools given in `request` (say, of another kind) are kept beside the loop's own.
    ...besideGivenTools(request.tools, toolParams),
    ...(limit !== undefined ? { [max.key]: limit } : {}),
  } as ChatCompletionCreateParamsNonStreaming;
}

/**
 * The conversation and `pending`; a final call without the last round (`ctx.withoutLastRound`)
 * sends the conversation as it stood before its last response, then the instruction.
 */
function sentMessages(
  messages: ChatCompletionMessageParam[],
  pending: ChatCompletionMessageParam[],
  ctx: OperationContext,
): ChatCompletionMessageParam[] {
  const before = ctx.withoutLastRound === true && ctx.wrapUp !== undefined ? beforeLastRound(messages) : undefined;
  return before === undefined ? [...messages, ...pending] : [...before, { role: 'user', content: ctx.wrapUp! }];
}

/**
 * The max output tokens a request asks for: the option, or one the caller put in `request`
 * (before it is lowered to `ctx.maxOutputTokens`, a strict cap with little left).
 */
export function configuredMax(options: OpenAIChatOptions): {
  key: 'max_completion_tokens' | 'max_tokens';
  value: number | undefined;
} {
  if (options.maxTokens !== undefined) return { key: 'max_completion_tokens', value: options.maxTokens };
  const r = options.request as { max_completion_tokens?: unknown; max_tokens?: unknown } | undefined;
  if (typeof r?.max_completion_tokens === 'number')
    return { key: 'max_completion_tokens', value: r.max_completion_tokens };
  if (typeof r?.max_tokens === 'number') return { key: 'max_tokens', value: r.max_tokens };
  return { key: 'max_completion_tokens', value: undefined };
}

/** The max output tokens a request asks for, under either name. */
export function maxTokensOf(body: ChatCompletionCreateParamsNonStreaming): number | undefined {
  return body.max_completion_tokens ?? body.max_tokens ?? undefined;
}

/** The loop's tools as Chat Completions function tools. */
function chatToolParams(tools: Readonly<Record<string, SdkTool>>): ChatCompletionTool[] {
  return toolDefinitions(tools).map((definition) => ({ type: 'function', function: definition }));
}

/** Request fields about tools, left out of a final call. */
const TOOL_FIELDS = ['tools', 'tool_choice', 'parallel_tool_calls', 'functions', 'function_call'] as const;
