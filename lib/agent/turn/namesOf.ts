import type { ToolCall } from '../AgentLoop';

/** `a, b, c`: the names of the calls, for descriptions. */
export function namesOf(calls: readonly ToolCall[]): string {
  let names = calls[0]?.name ?? '';
  for (let i = 1; i < calls.length; i++) names += `, ${calls[i]!.name}`;
  return names;
}
