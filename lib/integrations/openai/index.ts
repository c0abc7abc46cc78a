// agent-state-machine/openai: an AgentLoop on the `openai` client's Chat Completions API.
export { fromOpenAIChat, mapOpenAIUsage } from './fromOpenAIChat';
export type { OpenAIChatOptions, OpenAIChatLoop, OpenAIChatTool } from './fromOpenAIChat';
export type { SdkToolContext as ToolRunContext, StreamTextHandler } from '../../internal/sdkTools';
