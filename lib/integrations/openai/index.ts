// agent-state-machine/openai: AgentLoops on the `openai` client's Chat Completions and Responses APIs.
export { fromOpenAIChat, mapOpenAIUsage } from './fromOpenAIChat';
export type { OpenAIChatOptions, OpenAIChatLoop, OpenAIChatTool } from './fromOpenAIChat';
export { fromOpenAIResponses } from './fromOpenAIResponses';
export { mapResponsesUsage } from './mapResponsesUsage';
export { OpenAIResponseError } from './OpenAIResponseError';
export type { OpenAIResponsesOptions, OpenAIResponsesLoop, OpenAIResponsesTool } from './OpenAIResponsesOptions';
export type { SdkToolContext as ToolRunContext, StreamTextHandler } from '../../internal/sdkTools';
