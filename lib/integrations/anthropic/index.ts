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
// Your own loop on the Anthropic client: give it `meteredFetch`, and run the loop with `observeLoop` or `observeTask`.
export { messagesWire } from './messagesWire';
export { meteredFetch } from './meteredFetch';
export { observeLoop, observeTask, observeTool } from 'agent-state-machine';
