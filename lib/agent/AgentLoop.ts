/** Token and cost figures one LLM response reports. All optional: report what your SDK gives. */
export interface Usage {
  inputTokens?: number;
  outputTokens?: number;
  costUsd?: number;
}

/** A tool call the LLM asked for. */
export interface ToolCall {
  id: string;
  name: string;
  input?: unknown;
}

/** What a tool produced, sent back to the LLM. */
export interface ToolResult {
  callId: string;
  output: string;
  isError?: boolean;
}

/** One LLM response: text, tool calls, or both. No tool calls ends the turn. */
export interface LLMResponse {
  text?: string;
  toolCalls?: ToolCall[];
  usage?: Usage;
}

/** Handed to every operation: abort what you are doing when `signal` fires. */
export interface OperationContext {
  signal: AbortSignal;
  /** 1 for the first turn of this adapter. */
  turn: number;
  /** For LLM calls: 1 for the first attempt, 2 for the first retry, … */
  attempt?: number;
}

/**
 * The operations an agent loop already has. The adapter calls them in the order of the
 * sixteen-state flow; the conversation and its message format stay yours.
 */
export interface AgentLoop {
  /** Sends the user's message (with whatever history you keep) and returns the LLM's response. */
  sendUserMessage(message: string, ctx: OperationContext): Promise<LLMResponse>;
  /** Sends tool results, plus user or formatter messages that arrived meanwhile, and returns the next response. */
  sendToolResults(results: ToolResult[], messages: string[], ctx: OperationContext): Promise<LLMResponse>;
  /** Runs one tool call. A throw becomes an error result sent to the LLM; the turn goes on. */
  runTool(call: ToolCall, ctx: OperationContext): Promise<ToolResult>;
  /** New commit ids since the last check. */
  checkGitCommits?(ctx: OperationContext): Promise<string[]>;
  /** Runs formatters on the new commits; returns messages for the LLM, if any. */
  runAutoformatters?(commits: string[], ctx: OperationContext): Promise<string[] | void>;
  /** User messages that arrived while tools ran. */
  gatherAdditionalMessages?(ctx: OperationContext): Promise<string[]>;
}
