import type { MirrorResponse, ToolCall, Usage } from 'agent-state-machine';

/**
 * What a provider model's `doGenerate` returns, at the model level the AI SDK's middleware sees
 * (LanguageModelV2/V3/V4 alike): the fields read here have the same names in each.
 */
export interface ModelCallResult {
  content?: ReadonlyArray<{ type: string; [key: string]: unknown }>;
  usage?: unknown;
  finishReason?: unknown;
  response?: { modelId?: string };
}

/**
 * A model call's result as the mirror takes it: text, the tool calls the SDK will run (not the
 * provider-executed ones), usage, model and finish reason. Pure.
 */
export function modelResponseOf(result: ModelCallResult, fallbackModel: string | undefined): MirrorResponse {
  let text: string | undefined;
  const toolCalls: ToolCall[] = [];
  for (const part of result.content ?? []) {
    if (part.type === 'text' && typeof part.text === 'string') text = (text ?? '') + part.text;
    else if (part.type === 'tool-call' && part.providerExecuted !== true) toolCalls.push(toolCallOf(part));
  }
  const response: MirrorResponse = { usage: modelUsage(result.usage) };
  if (text !== undefined) response.text = text;
  if (toolCalls.length > 0) response.toolCalls = toolCalls;
  const model = result.response?.modelId ?? fallbackModel;
  if (model !== undefined) response.model = model;
  const finish = finishReasonOf(result.finishReason);
  if (finish !== undefined) response.finishReason = finish;
  return response;
}

/**
 * Collects a streamed model call's parts into the result `modelResponseOf` reads: text deltas
 * joined, tool calls, the model id of `response-metadata`, usage and finish reason of `finish`.
 */
export class StreamCollector {
  readonly #content: Array<{ type: string; [key: string]: unknown }> = [];
  #text = '';
  #modelId: string | undefined;
  #usage: unknown;
  #finishReason: unknown;
  /** Set by an `error` part. */
  error: unknown;
  /** Whether a `finish` part arrived. */
  finished = false;

  add(part: { type: string; [key: string]: unknown }): void {
    switch (part.type) {
      case 'text-delta':
        this.#text +=
          typeof part.delta === 'string' ? part.delta : typeof part.textDelta === 'string' ? part.textDelta : '';
        break;
      case 'tool-call':
        this.#content.push(part);
        break;
      case 'response-metadata':
        if (typeof part.modelId === 'string') this.#modelId = part.modelId;
        break;
      case 'finish':
        this.finished = true;
        this.#usage = part.usage;
        this.#finishReason = part.finishReason;
        break;
      case 'error':
        this.error ??= part.error;
        break;
    }
  }

  result(): ModelCallResult {
    const content = this.#text === '' ? this.#content : [{ type: 'text', text: this.#text }, ...this.#content];
    return {
      content,
      usage: this.#usage,
      finishReason: this.#finishReason,
      ...(this.#modelId === undefined ? {} : { response: { modelId: this.#modelId } }),
    };
  }
}

function toolCallOf(part: { [key: string]: unknown }): ToolCall {
  const raw = part.input;
  let input: unknown = raw;
  if (typeof raw === 'string') {
    try {
      input = raw === '' ? {} : JSON.parse(raw);
    } catch {
      input = raw;
    }
  }
  return { id: String(part.toolCallId), name: String(part.toolName), input };
}

/** A model-level usage: V3/V4 nest totals (`inputTokens.total`), V2 has flat numbers. */
export function modelUsage(usage: unknown): Usage {
  if (typeof usage !== 'object' || usage === null) return {};
  const u = usage as Record<string, unknown>;
  const input = u.inputTokens;
  const output = u.outputTokens;
  if (typeof input === 'object' && input !== null) {
    const i = input as Record<string, unknown>;
    const o = (typeof output === 'object' && output !== null ? output : {}) as Record<string, unknown>;
    return {
      inputTokens: num(i.total),
      outputTokens: num(o.total),
      cachedInputTokens: num(i.cacheRead),
      cacheWriteTokens: num(i.cacheWrite),
      reasoningTokens: num(o.reasoning),
    };
  }
  return {
    inputTokens: num(input),
    outputTokens: num(output),
    cachedInputTokens: num(u.cachedInputTokens),
    reasoningTokens: num(u.reasoningTokens),
  };
}

function finishReasonOf(reason: unknown): string | undefined {
  if (typeof reason === 'string') return reason;
  if (typeof reason === 'object' && reason !== null) {
    const unified = (reason as { unified?: unknown }).unified;
    if (typeof unified === 'string') return unified;
  }
  return undefined;
}

function num(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}
