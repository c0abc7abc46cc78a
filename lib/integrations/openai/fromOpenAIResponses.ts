// Past 400 lines: the loop, its options check, the Responses stream folded into a response, and
// the error mapping of the stream's error events are one wire format's, read together.
import type OpenAI from 'openai';
import type {
  FunctionTool,
  Response,
  ResponseCreateParamsNonStreaming,
  ResponseFunctionToolCall,
  ResponseIncludable,
  ResponseInputItem,
  ResponseOutputItem,
  ResponseStreamEvent,
  ResponseUsage,
} from 'openai/resources/responses/responses';
import {
  InvalidArgumentError,
  type AgentLoop,
  type LLMCall,
  type LLMCallBound,
  type LLMResponse,
  type CompactInfo,
  type CompactResult,
  type OperationContext,
  type SettleInfo,
  type ToolCall,
  type ToolResult,
  type Usage,
} from 'agent-state-machine';
import { uniqueCallIds } from '../../internal/uniqueCallIds';
import { loweredMaxTokens, noMaxTokensMessage } from '../../internal/loweredMaxTokens';
import { markUnbounded, type UnboundedWhy } from '../../internal/unboundedLoop';
import { requestTokenBound } from '../../internal/requestTokenBound';
import { dropOldestTurns } from '../../internal/dropOldestTurns';
import {
  checkSdkLoopOptions,
  runSdkTool,
  type OptionIssue,
  type SdkTool,
  type StreamTextHandler,
} from '../../internal/sdkTools';

/** A tool the LLM may call: description, JSON Schema of its input, and what running it does. */
export type OpenAIResponsesTool = SdkTool;

/** Options of `fromOpenAIResponses(client, options)`. */
export interface OpenAIResponsesOptions {
  /** The model id, e.g. `gpt-5-mini`, `o4-mini`, `gpt-4.1-mini`. */
  model: string;
  /** The tools the LLM may call, by name (sent as `function` tools). Read at every request, so changes made to the record in place reach the next one. */
  tools?: Record<string, OpenAIResponsesTool>;
  /** The system prompt, sent as the request's `instructions` with every request (not kept in `items`). */
  system?: string;
  /** A conversation to continue, as Responses input items (a previous loop's `items`). Copied, never modified. */
  items?: ResponseInputItem[];
  /**
   * Sent as `max_output_tokens` (the API's minimum is 16). Reasoning tokens count against it.
   * A strict `maxCostUsd` needs one (it bounds each call's output), and lowers it when little is left.
   */
  maxTokens?: number;
  /** Stream the response (the SDK's event stream); `onText` gets the text as it arrives. */
  stream?: boolean | StreamTextHandler;
  /**
   * Sent as `store`. Left out, the server's default applies (OpenAI: `true`, the response is
   * kept on OpenAI's servers and reasoning items are sent back by id). `false` keeps nothing
   * there (needed for Zero Data Retention organizations): reasoning then travels to the next
   * request as encrypted content (see `encryptedReasoning`).
   */
  store?: boolean;
  /**
   * Ask for `reasoning.encrypted_content` (added to `include`) and send reasoning items back
   * with it. Default: `store === false`, the only way reasoning reaches the next turn without
   * storage. Set it to `false` for a model that does not reason (gpt-4o, gpt-4.1, …) with
   * `store: false`: the API rejects that `include` for them.
   */
  encryptedReasoning?: boolean;
  /**
   * Sent as every function tool's `strict`. Default `false`: the schema means what it says,
   * as in Chat Completions. (Left out, the Responses API would rewrite each schema into strict
   * mode, making every property required.) `true` needs schemas with `additionalProperties:
   * false` and every property in `required`.
   */
  strictTools?: boolean;
  /** Extra body fields for every request (`reasoning`, `temperature`, `include`, `tool_choice`, `parallel_tool_calls`, …). */
  request?: Record<string, unknown>;
}

/** The `AgentLoop` `fromOpenAIResponses` returns, with the conversation it keeps. */
export interface OpenAIResponsesLoop extends AgentLoop {
  /**
   * The conversation so far, as Responses input items: only items whose call succeeded, the
   * output items of each response as the API accepts them back (reasoning included).
   * Serializable; pass it as `items` to continue the conversation in a new loop.
   */
  readonly items: ResponseInputItem[];
}

/**
 * A response the API failed after accepting the request: `status: 'failed'`, an `error`
 * event in the stream, or a status the loop cannot use (`cancelled`, `queued`). `code` is the
 * API's error code; `status` is the HTTP status the same failure gets outside a stream, when
 * the code tells it (429 for a rate limit, 500 for a server error, 400 for a rejected prompt
 * or image), so the adapter's retry policy treats both alike; otherwise undefined, and the
 * failure is retried as a dropped connection is.
 */
export class OpenAIResponseError extends Error {
  override readonly name = 'OpenAIResponseError';
  /** The API's error code (`server_error`, `rate_limit_exceeded`, `invalid_prompt`, …), or null. */
  readonly code: string | null;
  /** The HTTP status of the same failure outside a stream, when the code tells it. */
  readonly status: number | undefined;
  /** The request parameter the API blames, if any. */
  readonly param: string | null;
  /** The failed response's id, when it is known. */
  readonly responseId: string | undefined;

  constructor(
    message: string,
    details: {
      code?: string | null | undefined;
      param?: string | null | undefined;
      responseId?: string | undefined;
      cause?: unknown;
    } = {},
  ) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.code = details.code ?? null;
    this.param = details.param ?? null;
    this.responseId = details.responseId;
    this.status = httpStatusOf(this.code);
  }
}

const PROMPT_CODES = new Set([
  'invalid_prompt',
  'bio_policy',
  'data_residency_mismatch',
  'context_length_exceeded',
  'invalid_base64_image',
  'unsupported_image_media_type',
  'empty_image_file',
  'failed_to_download_image',
]);

function httpStatusOf(code: string | null): number | undefined {
  if (code === null) return undefined;
  if (code === 'rate_limit_exceeded' || code === 'too_many_requests') return 429;
  if (code === 'server_error' || code === 'vector_store_timeout') return 500;
  if (PROMPT_CODES.has(code) || code.startsWith('image_') || code.startsWith('invalid_image')) return 400;
  return undefined;
}

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
  const toolParamsNow = (): FunctionTool[] =>
    Object.entries(tools).map(([name, t]) => ({
      type: 'function',
      name,
      ...(t.description !== undefined ? { description: t.description } : {}),
      parameters: t.parameters,
      strict: options.strictTools ?? false,
    }));
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

  const requestBody = (pending: ResponseInputItem[], ctx: OperationContext): ResponseCreateParamsNonStreaming => {
    const toolParams = toolParamsNow();
    const configured =
      options.maxTokens ??
      (typeof options.request?.max_output_tokens === 'number' ? options.request.max_output_tokens : undefined);
    const limit = loweredMaxTokens(configured, ctx.maxOutputTokens);
    // The API takes no max_output_tokens below 16: a lower cap cannot be honoured by this loop.
    if (limit !== undefined && limit < 16)
      throw new Error(
        `fromOpenAIResponses cannot ask for ${limit} output tokens (the API's least max_output_tokens is 16): set minOutputTokens to 16 or more`,
      );
    return {
      ...options.request,
      model: options.model,
      // The budget note rides on this request alone.
      input: [...items, ...pending, ...(ctx.budgetNote === undefined ? [] : [userMessage(ctx.budgetNote)])],
      ...(options.system !== undefined ? { instructions: options.system } : {}),
      // Tools given in `request` (hosted ones such as web search) are kept beside the loop's own.
      ...(toolParams.length > 0
        ? { tools: [...((options.request?.tools as FunctionTool[] | undefined) ?? []), ...toolParams] }
        : {}),
      // A final call may use no tool; the definitions stay for the function calls already in the input.
      ...(ctx.wrapUp !== undefined && (toolParams.length > 0 || options.request?.tools !== undefined)
        ? { tool_choice: 'none' }
        : {}),
      ...(limit !== undefined ? { max_output_tokens: limit } : {}),
      ...(store !== undefined ? { store } : {}),
      ...(include.length > 0 ? { include } : {}),
    } as ResponseCreateParamsNonStreaming;
  };

  // A final call's instruction joins the conversation with the items it is sent with.
  const withInstruction = (pending: ResponseInputItem[], ctx: OperationContext): ResponseInputItem[] =>
    ctx.wrapUp === undefined ? pending : [...pending, userMessage(ctx.wrapUp)];

  async function call(sent: ResponseInputItem[], ctx: OperationContext): Promise<LLMResponse> {
    const pending = withInstruction(sent, ctx);
    const body = requestBody(pending, ctx);
    const requestOptions = { signal: ctx.signal, maxRetries: 0 };
    const response = stream
      ? await collectStream(
          await client.responses.create({ ...body, stream: true }, requestOptions),
          (delta) => onText?.(delta, { turn: ctx.turn, attempt: ctx.attempt ?? 1 }),
          ctx.signal,
        )
      : await client.responses.create(body, requestOptions);
    assertUsable(response);
    const { kept, toolCalls, text } = readOutput(response.output ?? [], store, freshId);
    // Committed only now, after the call succeeded: a retry sends exactly what the failed attempt sent.
    items.push(...pending, ...kept);
    return {
      ...(text !== '' || toolCalls.length === 0 ? { text } : {}),
      ...(toolCalls.length > 0 ? { toolCalls } : {}),
      usage: mapResponsesUsage(response.usage),
      model: response.model,
      finishReason: finishReasonOf(response, toolCalls.length > 0),
    };
  }

  const loop: OpenAIResponsesLoop = {
    honours: { wrapUp: true, budgetNote: true },
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
      return {
        inputTokens: requestTokenBound(body, input.length + 1, body.tools?.length ?? 0),
        maxOutputTokens: body.max_output_tokens,
        model: options.model,
      };
    },
    // Resuming: the request's items and the recorded answer (its text as an assistant message, its
    // function calls) join the conversation, as a call would add them. Reasoning items are not
    // in the record: the resumed conversation goes on without them.
    acceptRecorded: async (_operation, input, response): Promise<void> => {
      items.push(
        ...(input.kind === 'user_message' ? [userMessage(input.message)] : resultItems(input.results, input.messages)),
      );
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
      const kept = dropOldestTurns(
        items,
        (item) => (item as { role?: unknown }).role === 'user',
        info.operation === 'sendToolResults' ? 1 : 0,
      );
      items.splice(0, items.length, ...kept.messages);
      return { removedMessages: kept.removed };
    },
  };
  // Marked when its requests cannot be bounded: a strict cap refuses it before anything runs.
  return markUnbounded(loop, unboundedResponses(options));
}

/** Why a Responses loop made with `options` cannot bound its requests (it asks for no max output tokens), or undefined. */
function unboundedResponses(options: OpenAIResponsesOptions): UnboundedWhy | undefined {
  if (options.maxTokens !== undefined || typeof options.request?.max_output_tokens === 'number') return undefined;
  return {
    setting: 'options.maxTokens',
    remedy: '`maxTokens` on the loop',
    why: "fromOpenAIResponses sets no max output tokens, so a call's output (and its cost) has no bound",
  };
}

function resultItems(results: readonly ToolResult[], extra: readonly string[]): ResponseInputItem[] {
  return [...results.map(outputItem), ...(extra.length > 0 ? [userMessage(extra.join('\n\n'))] : [])];
}

function userMessage(text: string): ResponseInputItem {
  return { type: 'message', role: 'user', content: text };
}

function outputItem(result: ToolResult): ResponseInputItem {
  return { type: 'function_call_output', call_id: result.callId, output: result.output };
}

/** The options `fromOpenAIChat` shares, then the Responses API's own. Pure: returns the first problem. */
function checkResponsesOptions(options: unknown): OptionIssue | undefined {
  const shared = checkSdkLoopOptions(options);
  if (shared !== undefined) return shared;
  const o = options as Record<string, unknown>;
  if (o.messages !== undefined)
    return {
      argument: 'options.messages',
      expected: 'left out: the Responses loop keeps input items (use options.items)',
      value: o.messages,
    };
  if (o.items !== undefined && !Array.isArray(o.items))
    return { argument: 'options.items', expected: 'an array of Responses input items, or undefined', value: o.items };
  if (o.maxTokens !== undefined && (o.maxTokens as number) < 16)
    return {
      argument: 'options.maxTokens',
      expected: 'an integer of 16 or more (the least max_output_tokens the API takes)',
      value: o.maxTokens,
    };
  for (const flag of ['store', 'encryptedReasoning', 'strictTools']) {
    if (o[flag] !== undefined && typeof o[flag] !== 'boolean')
      return { argument: `options.${flag}`, expected: 'a boolean or undefined', value: o[flag] };
  }
  const request = o.request as Record<string, unknown> | undefined;
  if (request === undefined) return undefined;
  const owned: Record<string, string> = {
    input: 'left out: the loop sends the conversation (use options.items)',
    store: 'left out: use options.store',
    previous_response_id: 'left out: the loop sends the whole conversation with every request',
    conversation: 'left out: the loop sends the whole conversation with every request',
    background: 'left out: the loop needs the answer in the response',
  };
  for (const [key, expected] of Object.entries(owned)) {
    if (Object.prototype.hasOwnProperty.call(request, key))
      return { argument: `options.request.${key}`, expected, value: request[key] };
  }
  if (
    request.include !== undefined &&
    !(Array.isArray(request.include) && request.include.every((v) => typeof v === 'string'))
  ) {
    return {
      argument: 'options.request.include',
      expected: 'an array of strings, or undefined',
      value: request.include,
    };
  }
  return undefined;
}

/**
 * What one response adds to the conversation, the tool calls it asks for and its text. Output
 * items go back as the API returned them, except: a `function_call` keeps only what pairs it
 * with its output (`call_id`, `name`, `arguments`); with `store: false` messages lose their
 * ids (nothing was stored under them); a reasoning item that cannot be sent back is left out —
 * one without encrypted content under `store: false` (the API answers "Item with id 'rs_…' not
 * found"), or one that no other item follows (a response cut short while reasoning: the API
 * rejects a reasoning item "without its required following item").
 */
function readOutput(
  output: ResponseOutputItem[],
  store: boolean | undefined,
  freshId: () => string,
): { kept: ResponseInputItem[]; toolCalls: ToolCall[]; text: string } {
  // Empty or repeated call ids get fresh ones, in the conversation kept and in the calls returned alike.
  const calls = output.filter((item): item is ResponseFunctionToolCall => item.type === 'function_call');
  const ids = uniqueCallIds(
    calls.map((c) => c.call_id ?? ''),
    freshId,
  );
  const kept: ResponseInputItem[] = [];
  const toolCalls: ToolCall[] = [];
  let text = '';
  let refusal = '';
  output.forEach((item, index) => {
    switch (item.type) {
      case 'function_call': {
        const { conversation, call } = functionCall(item, ids[calls.indexOf(item)]!);
        kept.push(conversation);
        toolCalls.push(call);
        break;
      }
      case 'message': {
        for (const part of item.content ?? []) {
          if (part.type === 'output_text') text += part.text;
          else if (part.type === 'refusal') refusal += part.refusal;
        }
        const { id: _id, ...rest } = item;
        kept.push(store === false ? (rest as ResponseInputItem) : item);
        break;
      }
      case 'reasoning': {
        const followed = output.slice(index + 1).some((next) => next.type !== 'reasoning');
        const sendable =
          store !== false || (typeof item.encrypted_content === 'string' && item.encrypted_content !== '');
        if (followed && sendable) kept.push(item);
        break;
      }
      default:
        kept.push(item as ResponseInputItem);
    }
  });
  return { kept, toolCalls, text: text === '' ? refusal : text };
}

/**
 * The one place a `function_call` becomes a conversation item and a `ToolCall`, under the id
 * it goes by (`uniqueCallIds`), so that the conversation and the adapter see the same call.
 */
function functionCall(
  item: ResponseFunctionToolCall,
  callId: string,
): { conversation: ResponseInputItem; call: ToolCall } {
  const conversation: ResponseFunctionToolCall = {
    type: 'function_call',
    call_id: callId,
    name: item.name,
    arguments: item.arguments,
    ...(item.namespace !== undefined ? { namespace: item.namespace } : {}),
  };
  return { conversation, call: { id: callId, name: item.name, input: item.arguments } };
}

/** `completed` and `incomplete` carry an answer; `failed` and anything else is an error. */
function assertUsable(response: Response): void {
  const status = response.status;
  // Some compatible servers leave `status` out of a finished response.
  if (status === undefined || status === null || status === 'completed' || status === 'incomplete') return;
  if (status === 'failed') throw failedResponseError(response);
  throw new OpenAIResponseError(
    `the response ${response.id} has status '${String(status)}', not completed: the loop needs the answer in the response (no background mode)`,
    { responseId: response.id },
  );
}

function failedResponseError(response: Response, cause?: unknown): OpenAIResponseError {
  const error = response.error as { code?: string | null; message?: string } | null | undefined;
  return new OpenAIResponseError(
    `the response failed (${error?.code ?? 'no code'}): ${error?.message ?? 'no message'}`,
    { code: error?.code, responseId: response.id, cause },
  );
}

/** An `error` event, as documented (`code`, `message`, `param` on the event) or as the API sends it (under `error`). */
function errorEventError(event: object, responseId: string | undefined, cause?: unknown): OpenAIResponseError {
  const e = ((event as { error?: unknown }).error ?? event) as {
    code?: string | null;
    message?: string;
    param?: string | null;
    type?: string;
  };
  const code = e.code ?? e.type ?? null;
  return new OpenAIResponseError(
    `the response stream reported an error (${code ?? 'no code'}): ${e.message ?? 'no message'}`,
    { code, param: e.param, responseId, cause },
  );
}

/** Chat Completions' names for how the model stopped, so that a history reads the same whichever API made it. */
function finishReasonOf(response: Response, calledTools: boolean): string {
  if (response.status === 'incomplete') {
    const reason = response.incomplete_details?.reason;
    return reason === 'max_output_tokens' ? 'length' : reason === 'content_filter' ? 'content_filter' : 'incomplete';
  }
  return calledTools ? 'tool_calls' : 'stop';
}

/**
 * Every figure a Responses API usage reports, in the library's terms (`inputTokens` includes
 * the cached ones, as `input_tokens` does; `outputTokens` the reasoning ones), with the cost a
 * gateway such as OpenRouter reports in `usage.cost`.
 */
export function mapResponsesUsage(usage: ResponseUsage | null | undefined): Usage | undefined {
  if (usage === undefined || usage === null) return undefined;
  const input = usage.input_tokens_details as
    { cached_tokens?: number; cache_write_tokens?: number } | null | undefined;
  const output = usage.output_tokens_details as { reasoning_tokens?: number } | null | undefined;
  const cost = (usage as { cost?: unknown }).cost;
  return {
    inputTokens: usage.input_tokens,
    outputTokens: usage.output_tokens,
    cachedInputTokens: input?.cached_tokens,
    cacheWriteTokens: input?.cache_write_tokens,
    reasoningTokens: output?.reasoning_tokens,
    ...(typeof cost === 'number' && Number.isFinite(cost) ? { costUsd: cost } : {}),
  };
}

/**
 * Folds the SDK's event stream into the response it stands for: text deltas go to `onText`,
 * `response.completed` (or `response.incomplete`) carries the response. `response.failed` and
 * an `error` event are errors; a stream that ends before the response finished was dropped:
 * an error too (so the attempt is retried), never a short answer.
 */
async function collectStream(
  events: AsyncIterable<ResponseStreamEvent>,
  onText: (delta: string) => void,
  signal: AbortSignal,
): Promise<Response> {
  let final: Response | undefined;
  let responseId: string | undefined;
  try {
    for await (const event of events) {
      if (final !== undefined) continue;
      switch (event.type) {
        case 'response.created':
        case 'response.in_progress':
          responseId = event.response.id;
          break;
        case 'response.output_text.delta':
          onText(event.delta);
          break;
        case 'response.completed':
        case 'response.incomplete':
          final = event.response;
          break;
        case 'response.failed':
          throw failedResponseError(event.response);
        case 'error':
          throw errorEventError(event, responseId);
      }
    }
  } catch (error) {
    // The API nests an `error` event's fields under `error`, which the SDK throws as an
    // APIError without a status: give it the code's status, as for the documented form.
    const e = error as { status?: unknown; error?: unknown } | null;
    if (
      !(error instanceof OpenAIResponseError) &&
      typeof e === 'object' &&
      e !== null &&
      e.status === undefined &&
      typeof (e.error as { message?: unknown } | null)?.message === 'string'
    ) {
      throw errorEventError(e.error as object, responseId, error);
    }
    throw error;
  }
  if (final === undefined) {
    // The SDK ends an aborted stream quietly: say it was aborted, not dropped.
    signal.throwIfAborted();
    throw new Error(
      `the response stream ended before response.completed${responseId !== undefined ? ` (response ${responseId})` : ''}: the connection was dropped`,
    );
  }
  return final;
}
