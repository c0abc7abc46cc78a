import type { ModelRequest } from '@openai/agents';
import type { LLMCallBound } from 'agent-state-machine';
import { requestTokenBound } from '../../internal/requestTokenBound';

/**
 * The bound of one model call from the SDK's `ModelRequest`: its instructions, input items,
 * tools, handoffs (sent as tools) and output type, serialized, bound the input tokens
 * (`requestTokenBound`); `modelSettings.maxTokens` bounds the output. Says why there is none
 * when the output is unbounded, or when part of the input lives on the server
 * (`previousResponseId`, `conversationId`, a stored `prompt`) where it cannot be counted.
 */
export function requestBound(request: ModelRequest, model: string | undefined): LLMCallBound | string {
  const max = request.modelSettings?.maxTokens;
  if (!(typeof max === 'number' && Number.isSafeInteger(max) && max >= 0))
    return max === undefined
      ? "the request sets no maxTokens, so its output (and its cost) has no bound: set modelSettings: { maxTokens } on the Agent (or the Runner's modelSettings)"
      : `its modelSettings.maxTokens is ${String(max)}, not a non-negative integer`;
  if (request.previousResponseId !== undefined || request.conversationId !== undefined || request.prompt !== undefined)
    return 'part of its input is kept by the server (previousResponseId, conversationId or a stored prompt), where its tokens cannot be counted';
  const { systemInstructions, input, tools, handoffs, outputType } = request;
  const body = { systemInstructions, input, tools, handoffs, outputType };
  const messages = (typeof input === 'string' ? 1 : input.length) + (systemInstructions === undefined ? 0 : 1);
  const bound: LLMCallBound = {
    inputTokens: requestTokenBound(body, messages, (tools?.length ?? 0) + (handoffs?.length ?? 0)),
    maxOutputTokens: max,
  };
  if (model !== undefined) bound.model = model;
  return bound;
}
