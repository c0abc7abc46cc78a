// agent-state-machine/openai: AgentLoops on the `openai` client's Chat Completions and Responses APIs.
export { fromOpenAIChat, mapOpenAIUsage } from './fromOpenAIChat';
export type { OpenAIChatOptions, OpenAIChatLoop, OpenAIChatTool } from './fromOpenAIChat';
export { fromOpenAIResponses, mapResponsesUsage, OpenAIResponseError } from './fromOpenAIResponses';
export type { OpenAIResponsesOptions, OpenAIResponsesLoop, OpenAIResponsesTool } from './fromOpenAIResponses';
export type { SdkToolContext as ToolRunContext, StreamTextHandler } from '../../internal/sdkTools';
