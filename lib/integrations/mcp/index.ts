/**
 * The tools of an MCP server (`@modelcontextprotocol/sdk`, an optional peer dependency) for the loops.
 *
 * @module agent-state-machine/mcp
 */
export { mcpTools } from './mcpTools';
export type {
  McpAISDKTool,
  McpClient,
  McpSkippedTool,
  McpTool,
  McpToolInfo,
  McpTools,
  McpToolsChange,
  McpToolsOptions,
} from './mcpTools';
export { McpToolError } from './McpToolError';
export type { McpToolErrorCode } from './McpToolError';
export type { McpInputSchema } from './standardInputSchema';
