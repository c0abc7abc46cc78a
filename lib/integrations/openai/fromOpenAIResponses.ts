import type OpenAI from 'openai';
import type {
  ResponseCreateParamsNonStreaming,
  ResponseIncludable,
  ResponseInputItem,
  Response,
} from 'openai/resources/responses/responses';
import {
  InvalidArgumentError,
  type LLMCall,
  type LLMCallBound,
  type LLMResponse,
  type CompactInfo,
  type CompactResult,
  type OperationContext,
  type SettleInfo,
  type ToolCall,
  type ToolResult,
  watchOutputBound,
} from 'agent-state-machine';
import { noMaxTokensMessage } from '../../internal/loweredMaxTokens';
import { markUnbounded, type UnboundedWhy } from '../../internal/unboundedLoop';
import { requestTokenBound } from '../../internal/requestTokenBound';
import { serverToolInputBound } from '../../internal/serverToolInputBound';
import { compactTurns } from '../../internal/dropOldestTurns';
import { runSdkTool, type SdkTool } from '../../internal/sdkTools';
import type { OpenAIResponsesLoop, OpenAIResponsesOptions } from './OpenAIResponsesOptions';
import { checkResponsesOptions } from './checkResponsesOptions';
import { outputItem, resultItems, userMessage } from './inputItems';
import { responsesRequestBody, type ResponsesRequestParts } from './responsesRequestBody';
import { collectStream } from './collectStream';
import { assertUsable } from './assertUsable';
import { readOutput } from './readOutput';
import { refuseClientActions } from './refuseClientActions';
import { finishReasonOf } from './finishReasonOf';
import { mapResponsesUsage } from './mapResponsesUsage';
import { responsesServerToolPlan } from './responsesServerTools';

type ResponsesClient = Pick<OpenAI, 'responses'>;

/**
 * An `AgentLoop` on the `openai` client's Responses API (`client.responses.create`). Pass it
 * to `AgentWithStateMachine` and the integration is done: the SDK's own retries are off (the
 * adapter's retry policy governs and records every attempt), items are committed only after
 * the call that carries them succeeded, every `function_call` gets its `function_call_output`
 * (settled after a cancel, a budget stop or an error), reasoning items are carried to the
 * next request (encrypted with `store: false`), and usage comes back with cached and
 * reasoning tokens, the model and the status as a finish reason.
 */
export function fromOpenAIResponses(client: ResponsesClient, options: OpenAIResponsesOptions): OpenAIResponsesLoop {
  const responses = (client as { responses?: { create?: unknown } } | null)?.responses;
  if (typeof responses?.create !== 'function')
    throw new InvalidArgumentError('client', 'an OpenAI client (with responses.create)', client);
  const issue = checkResponsesOptions(options);
  if (issue !== undefined) throw new InvalidArgumentError(issue.argument, issue.expected, issue.value);

  // Read at every request, not copied: a record updated in place (as `mcpTools` does when the
  // server's tool list changes) offers the LLM its current tools.
  const tools: Readonly<Record<string, SdkTool>> = options.tools ?? {};
  const onText = typeof options.stream === 'object' ? options.stream.onText.bind(options.stream) : undefined;
  const stream = options.stream !== undefined && options.stream !== false;
  const store = options.store;
  const encrypted = options.encryptedReasoning ?? store === false;
  const requestInclude = (options.request?.include as ResponseIncludable[] | undefined) ?? [];
  const include: ResponseIncludable[] =
    encrypted && !requestInclude.includes('reasoning.encrypted_content')
      ? [...requestInclude, 'reasoning.encrypted_content']
      : requestInclude;
  const items: ResponseInputItem[] = structuredClone(options.items ?? []);
  let renamed = 0;
  const freshId = (): string => `call_asm${++renamed}`;

  const parts: ResponsesRequestParts = { options, tools, items, store, include };
  const requestBody = (pending: ResponseInputItem[], ctx: OperationContext): ResponseCreateParamsNonStreaming =>
    responsesRequestBody(parts, pending, ctx);

  // A final call's instruction joins the conversation with the items it is sent with.
  const withInstruction = (pending: ResponseInputItem[], ctx: OperationContext): ResponseInputItem[] =>
    ctx.wrapUp === undefined ? pending : [...pending, userMessage(ctx.wrapUp)];

  async function call(sent: ResponseInputItem[], ctx: OperationContext): Promise<LLMResponse> {
    const pending = withInstruction(sent, ctx);
    const body = requestBody(pending, ctx);
    let response: Response;
    if (stream) {
      // A streamed request is cut at its max tokens, whether the server stops there or not.
      const watch = watchOutputBound(body.max_output_tokens ?? undefined, ctx.signal);
      response = await collectStream(
        await client.responses.create({ ...body, stream: true }, { signal: watch.signal, maxRetries: 0 }),
        (delta) => onText?.(delta, { turn: ctx.turn, attempt: ctx.attempt ?? 1 }),
        watch,
      );
    } else response = await client.responses.create(body, { signal: ctx.signal, maxRetries: 0 });
    assertUsable(response);
    refuseClientActions(response);
    const { kept, toolCalls, text } = readOutput(response.output ?? [], store, freshId);
    // Committed only now, after the call succeeded: a retry sends exactly what the failed attempt sent.
    items.push(...pending);
    parts.roundAt = items.length;
    items.push(...kept);
    return {
      ...(text !== '' || toolCalls.length === 0 ? { text } : {}),
      ...(toolCalls.length > 0 ? { toolCalls } : {}),
      usage: mapResponsesUsage(response.usage, response.output ?? []),
      model: response.model,
      finishReason: finishReasonOf(response, toolCalls.length > 0),
    };
  }

  const loop: OpenAIResponsesLoop = {
    honours: { wrapUp: true, budgetNote: true },
    // Its compact drops the oldest turns: no LLM call.
    compactCalls: 'none',
    get items() {
      return items;
    },
    sendUserMessage: (message, ctx) => call([userMessage(message)], ctx),
    sendToolResults: (results, extra, ctx) => call(resultItems(results, extra), ctx),
    llmCallBound: (next: LLMCall, ctx: OperationContext): LLMCallBound => {
      const r = options.request as { previous_response_id?: unknown; conversation?: unknown } | undefined;
      // A conversation kept by the server is not in the request: its tokens cannot be bounded from it.
      if (r?.previous_response_id !== undefined || r?.conversation !== undefined)
        throw new Error(
          'fromOpenAIResponses cannot bound a request that continues a conversation kept by the server (request.previous_response_id or request.conversation)',
        );
      const pending =
        next.operation === 'sendUserMessage' ? [userMessage(next.message)] : resultItems(next.results, next.messages);
      const body = requestBody(withInstruction(pending, ctx), ctx);
      if (body.max_output_tokens === undefined || body.max_output_tokens === null)
        throw new Error(noMaxTokensMessage('fromOpenAIResponses'));
      const input = body.input as unknown[];
      const inputTokens = requestTokenBound(body, input.length + 1, body.tools?.length ?? 0);
      // Web search in `request.tools`: its uses' fees, and the input their results add.
      const plan = serverToolsOf(options);
      if (plan !== undefined && 'unbounded' in plan)
        throw new Error(
          `fromOpenAIResponses cannot bound this request: ${plan.unbounded.why} (set ${plan.unbounded.remedy})`,
        );
      if (plan === undefined) return { inputTokens, maxOutputTokens: body.max_output_tokens, model: options.model };
      return {
        inputTokens: serverToolInputBound(inputTokens, body.max_output_tokens, plan),
        maxOutputTokens: body.max_output_tokens,
        model: options.model,
        serverToolUses: plan.uses,
      };
    },
    // Resuming: the request's items and the recorded answer (its text as an assistant message, its
    // function calls) join the conversation, as a call would add them. Reasoning items are not
    // in the record: the resumed conversation goes on without them.
    acceptRecorded: async (_operation, input, response): Promise<void> => {
      items.push(
        ...(input.kind === 'user_message' ? [userMessage(input.message)] : resultItems(input.results, input.messages)),
      );
      parts.roundAt = items.length;
      if (response.text !== undefined && response.text !== '')
        items.push({ type: 'message', role: 'assistant', content: response.text });
      for (const c of response.toolCalls ?? [])
        items.push({
          type: 'function_call',
          call_id: c.id,
          name: c.name,
          arguments: typeof c.input === 'string' ? c.input : JSON.stringify(c.input ?? {}),
        });
    },
    runTool: async (toolCall: ToolCall, ctx: OperationContext): Promise<ToolResult> => ({
      callId: toolCall.id,
      ...(await runSdkTool(tools, toolCall, ctx)),
    }),
    settleToolCalls: async (results: ToolResult[], _info: SettleInfo): Promise<void> => {
      items.push(...results.map(outputItem));
    },
    // Used when the adapter's `compact` option is on: drops the older half of the earlier turns.
    // A turn starts at a user message item (function_call_output items are their own type), so
    // no function_call (nor the reasoning item before it) is parted from its output.
    compact: async (info: CompactInfo): Promise<CompactResult> => {
      // The last round's place moves with what is dropped: a final call then goes whole.
      parts.roundAt = undefined;
      return compactTurns(items, (item) => (item as { role?: unknown }).role === 'user', info.operation);
    },
  };
  // Marked when its requests cannot be bounded: a strict cap refuses it before anything runs.
  return markUnbounded(loop, unboundedResponses(options));
}

/** The server tools of `options.request` and what they may add to a request, or why that has no bound. */
function serverToolsOf(options: OpenAIResponsesOptions): ReturnType<typeof responsesServerToolPlan> {
  return responsesServerToolPlan(
    options.request?.tools,
    options.request?.max_tool_calls,
    options.serverToolResultTokens,
  );
}

/**
 * Why a Responses loop made with `options` cannot bound its requests (it asks for no max output
 * tokens, or offers server tools that nothing bounds), or undefined.
 */
function unboundedResponses(options: OpenAIResponsesOptions): UnboundedWhy | undefined {
  const plan = serverToolsOf(options);
  if (plan !== undefined && 'unbounded' in plan) return plan.unbounded;
  if (options.maxTokens !== undefined || typeof options.request?.max_output_tokens === 'number') return undefined;
  return {
    setting: 'options.maxTokens',
    remedy: '`maxTokens` on the loop',
    why: "fromOpenAIResponses sets no max output tokens, so a call's output (and its cost) has no bound",
  };
}
