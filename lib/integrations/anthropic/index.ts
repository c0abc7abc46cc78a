/**
 * An AgentLoop on @anthropic-ai/sdk's Messages API.
 *
 * @module agent-state-machine/anthropic
 */
export { fromAnthropic, mapAnthropicUsage } from './fromAnthropic';
export type { AnthropicOptions, AnthropicLoop, AnthropicTool } from './fromAnthropic';
export type { SdkToolContext as ToolRunContext, StreamTextHandler } from '../../internal/sdkTools';
export { defineTool } from '../../internal/defineTool';
export type { TypedTool } from '../../internal/defineTool';
