import type { MirrorResponse } from 'agent-state-machine';

/**
 * A journaled response as the AI SDK's model layer returns it, so that a resumed run's loop
 * takes it as it took the live one: `doGenerate`'s result, or `doStream`'s parts. The journal
 * keeps what the mirror reads of a response (text, tool calls, usage, model, finish reason);
 * provider metadata and reasoning are not kept, so a served step has none. `version` is the
 * model's `specificationVersion`: V2 has flat usage and a string finish reason. Pure.
 */
export function recordedResult(response: MirrorResponse, version: unknown): Record<string, unknown> {
  const calls = response.toolCalls ?? [];
  const content: Array<Record<string, unknown>> = [];
  if (response.text !== undefined && response.text !== '') content.push({ type: 'text', text: response.text });
  for (const call of calls)
    content.push({ type: 'tool-call', toolCallId: call.id, toolName: call.name, input: inputText(call.input) });
  return {
    content,
    finishReason: finishOf(response, version),
    usage: usageOf(response, version),
    warnings: [],
    ...(response.model === undefined ? {} : { response: { modelId: response.model } }),
  };
}

/** The same response as `doStream`'s stream: start, metadata, the text, the tool calls, the finish. */
export function recordedStream(response: MirrorResponse, version: unknown): ReadableStream<{ type: string }> {
  const parts: Array<{ type: string; [key: string]: unknown }> = [{ type: 'stream-start', warnings: [] }];
  if (response.model !== undefined) parts.push({ type: 'response-metadata', modelId: response.model });
  if (response.text !== undefined && response.text !== '')
    parts.push(
      { type: 'text-start', id: 'recorded-text' },
      { type: 'text-delta', id: 'recorded-text', delta: response.text },
      { type: 'text-end', id: 'recorded-text' },
    );
  for (const call of response.toolCalls ?? [])
    parts.push({ type: 'tool-call', toolCallId: call.id, toolName: call.name, input: inputText(call.input) });
  parts.push({ type: 'finish', finishReason: finishOf(response, version), usage: usageOf(response, version) });
  return new ReadableStream({
    start(controller) {
      for (const part of parts) controller.enqueue(part);
      controller.close();
    },
  });
}

function inputText(input: unknown): string {
  return typeof input === 'string' ? input : (JSON.stringify(input ?? {}) ?? '{}');
}

function finishOf(response: MirrorResponse, version: unknown): unknown {
  const unified = response.finishReason ?? ((response.toolCalls ?? []).length > 0 ? 'tool-calls' : 'stop');
  return version === 'v2' ? unified : { unified, raw: undefined };
}

function usageOf(response: MirrorResponse, version: unknown): unknown {
  const u = response.usage ?? {};
  if (version === 'v2')
    return {
      inputTokens: u.inputTokens,
      outputTokens: u.outputTokens,
      // A total of one count and a missing one would be too low: unknown unless both are known.
      totalTokens:
        u.inputTokens === undefined || u.outputTokens === undefined ? undefined : u.inputTokens + u.outputTokens,
      reasoningTokens: u.reasoningTokens,
      cachedInputTokens: u.cachedInputTokens,
    };
  return {
    inputTokens: {
      total: u.inputTokens,
      noCache: undefined,
      cacheRead: u.cachedInputTokens,
      cacheWrite: u.cacheWriteTokens,
    },
    outputTokens: { total: u.outputTokens, text: undefined, reasoning: u.reasoningTokens },
  };
}
