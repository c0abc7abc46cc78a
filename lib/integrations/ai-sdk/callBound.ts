import type { LLMCallBound } from 'agent-state-machine';
import { requestTokenBound } from '../../internal/requestTokenBound';
import type { CallOptions } from './withFlags';

/**
 * The bound of one model call, from the options the SDK hands the model: the prompt (system
 * messages included), the tool definitions (their JSON Schemas) and the response format,
 * serialized, bound the input tokens (`requestTokenBound`); `maxOutputTokens` bounds the
 * output. Without `maxOutputTokens` the output has no bound: says why, for the refusal.
 */
export function callBound(o: CallOptions, model: string | undefined): LLMCallBound | string {
  const max = o.maxOutputTokens;
  if (!(typeof max === 'number' && Number.isSafeInteger(max) && max >= 0))
    return max === undefined
      ? "the call sets no maxOutputTokens, so its output (and its cost) has no bound: pass maxOutputTokens to generateText, streamText or the ToolLoopAgent's settings"
      : `its maxOutputTokens is ${String(max)}, not a non-negative integer`;
  const prompt = Array.isArray(o.prompt) ? o.prompt : [];
  const tools = Array.isArray(o.tools) ? o.tools : [];
  const body = { prompt: o.prompt, tools: o.tools, toolChoice: o.toolChoice, responseFormat: o.responseFormat };
  const bound: LLMCallBound = {
    inputTokens: requestTokenBound(body, prompt.length, tools.length),
    maxOutputTokens: max,
  };
  if (model !== undefined) bound.model = model;
  return bound;
}
