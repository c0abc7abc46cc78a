import type { MirrorResponse, ToolCall, Usage } from 'agent-state-machine';

/** The parts of an Agents SDK `ModelResponse` (or a streamed `response_done`'s response) the mirror reads. */
export interface AgentsModelOutput {
  usage?: AgentsUsage | undefined;
  output: readonly unknown[];
}

/** An Agents SDK `Usage` (class or plain `UsageData`): details are a record or a list of records per request. */
export interface AgentsUsage {
  inputTokens?: number | undefined;
  outputTokens?: number | undefined;
  inputTokensDetails?: Record<string, number> | readonly Record<string, number>[] | undefined;
  outputTokensDetails?: Record<string, number> | readonly Record<string, number>[] | undefined;
}

/**
 * What the mirror records of one Agents SDK model response: the assistant text, the function
 * calls (handoffs included: a handoff is a function call to its `transfer_to_…` tool), the
 * tokens. Hosted tools (web search, code interpreter) run on the provider's side inside the
 * response, so they are not tool calls of the loop.
 */
export function responseOf(response: AgentsModelOutput, model: string | undefined): MirrorResponse {
  const texts: string[] = [];
  const toolCalls: ToolCall[] = [];
  for (const item of response.output) {
    if (typeof item !== 'object' || item === null) continue;
    const it = item as { type?: unknown; role?: unknown; content?: unknown };
    if (it.type === 'message' && it.role === 'assistant' && Array.isArray(it.content)) {
      for (const part of it.content as { type?: unknown; text?: unknown; refusal?: unknown }[]) {
        if (part?.type === 'output_text' && typeof part.text === 'string') texts.push(part.text);
        else if (part?.type === 'refusal' && typeof part.refusal === 'string') texts.push(part.refusal);
      }
    } else if (it.type === 'function_call') {
      const call = item as { callId?: unknown; id?: unknown; name?: unknown; arguments?: unknown };
      const id = typeof call.callId === 'string' ? call.callId : typeof call.id === 'string' ? call.id : '';
      toolCalls.push({ id, name: String(call.name), input: parseArguments(call.arguments) });
    }
  }
  const out: MirrorResponse = { usage: usageOf(response.usage) };
  if (texts.length > 0) out.text = texts.join('');
  if (toolCalls.length > 0) out.toolCalls = toolCalls;
  if (model !== undefined) out.model = model;
  out.finishReason = toolCalls.length > 0 ? 'tool_calls' : 'stop';
  return out;
}

/** The library's usage from an Agents SDK usage: cached input and reasoning output are parts of the totals. */
export function usageOf(usage: AgentsUsage | undefined): Usage | undefined {
  if (usage === undefined || usage === null) return undefined;
  // The SDK stands in `new Usage({ requests: 1 })`, all zeros, for a response that reported no
  // usage (its Chat Completions model). No request is billed for nothing in and nothing out, so
  // those zeros are missing counts: the call is charged at its hold, never priced at $0.
  if (!usage.inputTokens && !usage.outputTokens) return undefined;
  const out: Usage = { inputTokens: usage.inputTokens, outputTokens: usage.outputTokens };
  const cached = detail(usage.inputTokensDetails, 'cached_tokens');
  if (cached !== undefined) out.cachedInputTokens = cached;
  const reasoning = detail(usage.outputTokensDetails, 'reasoning_tokens');
  if (reasoning !== undefined) out.reasoningTokens = reasoning;
  return out;
}

function detail(details: AgentsUsage['inputTokensDetails'], key: string): number | undefined {
  if (details === undefined || details === null) return undefined;
  const list = Array.isArray(details) ? details : [details as Record<string, number>];
  let sum: number | undefined;
  for (const d of list) {
    const v = d?.[key];
    if (typeof v === 'number' && Number.isFinite(v)) sum = (sum ?? 0) + v;
  }
  return sum;
}

function parseArguments(args: unknown): unknown {
  if (typeof args !== 'string') return args;
  try {
    return JSON.parse(args) as unknown;
  } catch {
    return args;
  }
}
