/** What went wrong between us and an MCP server. */
export type McpToolErrorCode =
  /** The connection closed while a call ran: the server process exited or crashed. */
  | 'connection_closed'
  /** The client had no connection when a call was asked for (it closed earlier). */
  | 'not_connected'
  /** The server did not answer a call within `timeoutMs`; the call was cancelled on the server. */
  | 'timeout'
  /** The server answered a call with a JSON-RPC error instead of a result. */
  | 'call_failed'
  /** The tool's result said `isError: true` (thrown only by `aiSdkTools`, whose tools report failure by throwing). */
  | 'tool_error'
  /** Listing the server's tools failed. */
  | 'list_failed';

/**
 * A failure of an MCP server or of the connection to it, naming the server, the tool and what
 * happened. A loop's tool throws it, and the adapter sends its message to the LLM as an error
 * result: a crashed or silent server ends a call, never a turn.
 */
export class McpToolError extends Error {
  override readonly name = 'McpToolError';
  readonly code: McpToolErrorCode;
  /** The server's name (`name` option, or the name it gave when the client connected). */
  readonly server: string;
  /** The tool's name on the server, when a call failed. */
  readonly tool: string | undefined;

  constructor(
    code: McpToolErrorCode,
    message: string,
    details: { server: string; tool?: string | undefined; cause?: unknown },
  ) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.code = code;
    this.server = details.server;
    this.tool = details.tool;
  }
}
