/**
 * An AgentLoop on @anthropic-ai/sdk's Messages API.
 *
 * @module agent-state-machine/anthropic
 */
export { fromAnthropic } from './fromAnthropic';
export { mapAnthropicUsage } from './mapAnthropicUsage';
export type { AnthropicOptions, AnthropicLoop, AnthropicTool } from './fromAnthropic';
export type { SdkToolContext as ToolRunContext, StreamTextHandler } from '../../internal/sdkTools';
export { defineTool } from '../../internal/defineTool';
export type { TypedTool } from '../../internal/defineTool';
