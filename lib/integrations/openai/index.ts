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
