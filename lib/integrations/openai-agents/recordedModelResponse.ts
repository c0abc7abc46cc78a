import { Usage, type ModelResponse, type StreamEvent } from '@openai/agents';
import type { MirrorResponse } from 'agent-state-machine';

type OutputItems = ModelResponse['output'];

/**
 * A journaled response as the Agents SDK's `Model` returns it, so that a resumed run's loop takes
 * it as it took the live one: the assistant text as one message, each function call (handoffs
 * included) as a `function_call` item with its recorded call id. The journal keeps what the
 * mirror reads of a response (text, calls, usage), so a served step has no reasoning items or
 * provider data. Pure.
 */
export function recordedModelResponse(response: MirrorResponse, served: number): ModelResponse {
  const output: OutputItems = [];
  for (const call of response.toolCalls ?? [])
    output.push({
      type: 'function_call',
      callId: call.id,
      name: call.name,
      arguments: typeof call.input === 'string' ? call.input : (JSON.stringify(call.input ?? {}) ?? '{}'),
      status: 'completed',
    });
  if (response.text !== undefined && response.text !== '')
    output.push({
      type: 'message',
      role: 'assistant',
      status: 'completed',
      content: [{ type: 'output_text', text: response.text }],
    });
  // Only the counts the journal knows: the SDK's Usage fills a missing one itself, and a served
  // response is never charged again.
  const inputTokens = response.usage?.inputTokens;
  const outputTokens = response.usage?.outputTokens;
  return {
    output,
    usage: new Usage({
      requests: 1,
      ...(inputTokens === undefined ? {} : { inputTokens }),
      ...(outputTokens === undefined ? {} : { outputTokens }),
    }),
    responseId: `recorded_${served}`,
  };
}

/** The same response as `getStreamedResponse`'s events: started, the text, done. */
export async function* recordedStreamEvents(response: ModelResponse): AsyncGenerator<StreamEvent> {
  yield { type: 'response_started' };
  for (const item of response.output)
    if (item.type === 'message' && item.role === 'assistant')
      for (const part of item.content)
        if (part.type === 'output_text') yield { type: 'output_text_delta', delta: part.text };
  const { requests, inputTokens, outputTokens, totalTokens } = response.usage;
  yield {
    type: 'response_done',
    response: {
      id: response.responseId!,
      usage: { requests, inputTokens, outputTokens, totalTokens },
      output: response.output,
    },
  } as StreamEvent;
}
