import type { ResponseInputItem } from 'openai/resources/responses/responses';
import type { ToolResult } from 'agent-state-machine';

/** The input items of a round's tool results, then the extra messages as one user message. */
export function resultItems(results: readonly ToolResult[], extra: readonly string[]): ResponseInputItem[] {
  return [...results.map(outputItem), ...(extra.length > 0 ? [userMessage(extra.join('\n\n'))] : [])];
}

/** A user message input item. */
export function userMessage(text: string): ResponseInputItem {
  return { type: 'message', role: 'user', content: text };
}

/** The `function_call_output` item of a tool result. */
export function outputItem(result: ToolResult): ResponseInputItem {
  return { type: 'function_call_output', call_id: result.callId, output: result.output };
}
