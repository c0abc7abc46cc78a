/**
 * AgentLoops on the `openai` client's Chat Completions and Responses APIs.
 *
 * @module agent-state-machine/openai
 */
export { fromOpenAIChat, mapOpenAIUsage } from './fromOpenAIChat';
export type { OpenAIChatOptions, OpenAIChatLoop, OpenAIChatTool } from './fromOpenAIChat';
export { fromOpenAIResponses } from './fromOpenAIResponses';
export { mapResponsesUsage } from './mapResponsesUsage';
export { OpenAIResponseError } from './OpenAIResponseError';
export type { OpenAIResponsesOptions, OpenAIResponsesLoop, OpenAIResponsesTool } from './OpenAIResponsesOptions';
export type { SdkToolContext as ToolRunContext, StreamTextHandler } from '../../internal/sdkTools';
export { defineTool } from '../../internal/defineTool';
export type { TypedTool } from '../../internal/defineTool';
// Your own loop on the openai client: give it `meteredFetch`, and run the loop with `observeLoop` or `observeTask`.
export { chatWire } from './chatWire';
export { responsesWire } from './responsesWire';
export { meteredFetch } from './meteredFetch';
export { observeLoop, observeTask, observeTool } from 'agent-state-machine';
