import type { ModelMessage } from 'ai';
import type { TurnResult } from 'agent-state-machine';

/**
 * The run's messages with every tool call answered: the calls of a step that never finished
 * (the loop was stopped during its tools) get their assistant message and error results.
 */
export function answeredMessages(
  messages: ModelMessage[],
  result: TurnResult | undefined,
  calls: ReadonlyArray<{ id: string; name: string; input: unknown }>,
  text: string | undefined,
): ModelMessage[] {
  const unanswered = result?.unansweredToolCalls;
  if (unanswered === undefined || unanswered.length === 0) return messages;
  const answeredIds = new Set<string>();
  for (const m of messages)
    if (m.role === 'tool')
      for (const part of m.content) if (part.type === 'tool-result') answeredIds.add(part.toolCallId);
  const missing = unanswered.filter((u) => !answeredIds.has(u.call.id));
  if (missing.length === 0) return messages;
  const missingIds = new Set(missing.map((u) => u.call.id));
  const stepCalls = calls.filter((c) => missingIds.has(c.id));
  const assistant: ModelMessage = {
    role: 'assistant',
    content: [
      ...(text === undefined || text === '' ? [] : [{ type: 'text' as const, text }]),
      ...stepCalls.map((c) => ({ type: 'tool-call' as const, toolCallId: c.id, toolName: c.name, input: c.input })),
    ],
  };
  const tool: ModelMessage = {
    role: 'tool',
    content: missing.map((u) => ({
      type: 'tool-result' as const,
      toolCallId: u.call.id,
      toolName: u.call.name,
      output: { type: 'error-text' as const, value: u.result.output },
    })),
  };
  return [...messages, assistant, tool];
}
