import type {
  ContentBlockParam,
  MessageCreateParamsNonStreaming,
  MessageParam,
  Tool,
} from '@anthropic-ai/sdk/resources/messages';
import type { OperationContext } from 'agent-state-machine';
import { beforeLastRound } from '../../internal/beforeLastRound';
import { loweredMaxTokens } from '../../internal/loweredMaxTokens';
import { besideGivenTools, toolDefinitions, type SdkTool } from '../../internal/sdkTools';
import type { AnthropicOptions } from './AnthropicOptions';

/** What every request of an Anthropic loop is made from, fixed when the loop is made. */
export interface AnthropicRequestParts {
  options: AnthropicOptions;
  /** The loop's tools, read at every request (a record updated in place offers its current tools). */
  tools: Readonly<Record<string, SdkTool>>;
  /** The conversation so far, as the loop keeps it. */
  messages: MessageParam[];
}

/** One request: its body, the user message the conversation keeps if it succeeds, and whether that replaces the last one. */
export interface AnthropicRequest {
  body: MessageCreateParamsNonStreaming;
  pending: MessageParam;
  joined: boolean;
}

/**
 * The request that sends `next`: joined to the last committed message when `merge` and that
 * is a user message (settled tool results), with a final call's instruction and the budget
 * note, the loop's tools beside those of `request`, and `max_tokens` lowered to what the
 * budget leaves (`ctx.maxOutputTokens`).
 */
export function anthropicRequest(
  parts: AnthropicRequestParts,
  next: MessageParam,
  ctx: OperationContext,
  merge: boolean,
): AnthropicRequest {
  const { options, messages } = parts;
  const last = messages.at(-1);
  const joined = merge && last?.role === 'user';
  // A final call's instruction joins the conversation with the message it is sent with.
  const instruction: ContentBlockParam[] = ctx.wrapUp === undefined ? [] : [{ type: 'text', text: ctx.wrapUp }];
  const pending: MessageParam = joined
    ? { role: 'user', content: [...blocks(last.content), ...blocks(next.content), ...instruction] }
    : instruction.length === 0
      ? next
      : { role: 'user', content: [...blocks(next.content), ...instruction] };
  // A final call without the last round (`ctx.withoutLastRound`): the conversation as it stood
  // before its last response, the instruction joined to its last user message (`pending` is
  // still what it commits).
  const cut = ctx.withoutLastRound === true && instruction.length > 0 ? beforeLastRound(messages) : undefined;
  const lastKept = cut?.at(-1);
  const asked: MessageParam =
    lastKept?.role === 'user' ? { role: 'user', content: [...blocks(lastKept.content), ...instruction] } : pending;
  // The budget note rides on this request alone.
  const sent: MessageParam =
    ctx.budgetNote === undefined
      ? asked
      : { role: 'user', content: [...blocks(asked.content), { type: 'text', text: ctx.budgetNote }] };
  const before = asked !== pending ? cut!.slice(0, -1) : joined ? messages.slice(0, -1) : messages;
  const toolParams = anthropicToolParams(parts.tools);
  const body = {
    ...options.request,
    model: options.model,
    // Extended thinking's budget is part of max_tokens: it bounds all the output.
    max_tokens: loweredMaxTokens(options.maxTokens ?? 4096, ctx.maxOutputTokens)!,
    messages: [...before, sent],
    ...(options.system !== undefined ? { system: options.system } : {}),
    // Tools given in `request` (server tools such as web search) are kept beside the loop's own.
    ...besideGivenTools(options.request?.tools, toolParams),
    // A final call may use no tool: the definitions stay (the conversation's tool_use blocks need them).
    ...(ctx.wrapUp !== undefined && (toolParams.length > 0 || options.request?.tools !== undefined)
      ? { tool_choice: { type: 'none' } }
      : {}),
  } as MessageCreateParamsNonStreaming;
  return { body, pending, joined };
}

/** The loop's tools as the Messages API takes them. */
function anthropicToolParams(tools: Readonly<Record<string, SdkTool>>): Tool[] {
  return toolDefinitions(tools).map(({ parameters, ...named }): Tool => ({
    ...named,
    input_schema: parameters as Tool['input_schema'],
  }));
}

/** A message's content as blocks (a string is one text block). */
export function blocks(content: MessageParam['content']): ContentBlockParam[] {
  return typeof content === 'string' ? [{ type: 'text', text: content }] : content;
}
